// POST /api/v1/ingest/events maps `action` through the log sources' vocabulary: "BLOCK" is stored as deny, the word kept.
import { describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

describe.each(backendNames)('raw ingest actions (%s)', (backendName) => {
  const { app } = suiteApp(backendName, {}, {}, { inject: true });

  it('maps words of the vocabulary, keeps the word in metadata.actionWord, and an unknown word in metadata.rawAction', async () => {
    const org = await createOrg(app.url);
    const words = ['BLOCK', 'allow', 'Redacted', 'flagged', 'quarantine', null];
    const sent = words.map((action, i) => ({ id: `a-${i}`, serverId: 'gw', toolName: `t${i}`, action, metadata: { note: 'kept' } }));
    expect((await postEvents(app.url, org.key, sent)).body).toEqual({ accepted: 6, duplicates: 0 });
    const r = await http(`${app.url}/api/v1/audit-events?type=tool_call&order=asc`, { headers: bearer(org.key) });
    const got = r.body.items.map((e: { action: string | null; metadata: Record<string, unknown> }) => [e.action, e.metadata.actionWord ?? null, e.metadata.rawAction ?? null, e.metadata.note]);
    expect(got).toEqual([
      ['deny', 'BLOCK', null, 'kept'],
      ['allow', null, null, 'kept'],
      ['redact', 'Redacted', null, 'kept'],
      ['flag', 'flagged', null, 'kept'],
      [null, null, 'quarantine', 'kept'],
      [null, null, null, 'kept'],
    ]);
    // Filtering by the vocabulary finds the mapped call; the figures count it as deny.
    const denied = await http(`${app.url}/api/v1/audit-events?action=deny`, { headers: bearer(org.key) });
    expect(denied.body.items.map((e: { toolName: string }) => e.toolName)).toEqual(['t0']);
    const stats = await http(`${app.url}/api/v1/audit-events/stats?window=24h`, { headers: bearer(org.key) });
    expect(stats.body.actions).toMatchObject({ deny: 1, allow: 1, redact: 1, flag: 1, unknown: 2 });
  });
});
