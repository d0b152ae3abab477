// The held-out gateway, authorization and agent-hook formats (test/fixtures/gateways/*.expected.json) sent through
// CloudWatch ingest: every field stored is the expected one (a field may be missed, never wrong), and most are found.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bearer, createOrg, http } from '../helpers/app.js';
import { backendNames } from '../helpers/backends.js';
import { suiteApp } from '../helpers/suite-app.js';
import { fixture, fixtureJson, ingestedEvents, type StoredEvent } from '../ingest/ingest-kit.js';

const DIR = fileURLToPath(new URL('../fixtures/gateways/', import.meta.url));
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.expected.json'));
const FIELDS = ['toolName', 'action', 'actionWord', 'serverId', 'sessionId', 'latencyMs', 'timestamp', 'traceId', 'method'] as const;

function stored(e: StoredEvent): Record<(typeof FIELDS)[number], unknown> {
  return {
    toolName: e.toolName,
    action: e.action,
    actionWord: e.metadata.actionWord ?? null,
    serverId: e.serverId,
    sessionId: e.sessionId,
    latencyMs: e.latencyMs,
    // The entries are sent without a timestamp of their own: the stored time is the one read from the line, else receipt.
    timestamp: e.occurredAt,
    traceId: e.metadata.traceId ?? null,
    method: e.metadata.mcpMethod ?? null,
  };
}

describe.each(backendNames)('held-out formats through CloudWatch ingest (%s backend)', (backendName) => {
  const { app } = suiteApp(backendName);
  let expected = 0;
  let found = 0;

  it.each(FILES)('%s: every stored field matches the expected value', async (file) => {
    const spec = fixtureJson<{ fixture: string; items: Record<string, unknown>[] }>(`gateways/${file}`);
    const lines = fixture(`gateways/${spec.fixture}`).toString('utf8').split('\n').filter((l) => l.trim());
    const org = await createOrg(app.url);
    const events = spec.items.map((item) => ({ message: lines[(item.line as number) - 1], timestamp: null }));
    const r = await http(`${app.url}/api/v1/ingest/cloudwatch`, { method: 'POST', headers: bearer(org.key), json: { logGroup: '/gateway', logStream: 's', events } });
    expect(r.status).toBe(200);
    const rows = await ingestedEvents(app.url, org.key);
    expect(rows).toHaveLength(spec.items.length);
    spec.items.forEach((item, i) => {
      const got = stored(rows[i]);
      for (const field of FIELDS) {
        if (item[field] === null || item[field] === undefined) continue;
        expected++;
        if (got[field] === item[field]) found++;
        // A time not read from the line is the receipt time, and a trace id not found may be the request id: both count
        // as misses. Any other field stored must be the expected one.
        if (got[field] !== null && field !== 'timestamp' && field !== 'traceId') expect({ file, line: item.line, field, value: got[field] }).toEqual({ file, line: item.line, field, value: item[field] });
      }
    });
  });

  it('finds at least 90 % of the expected fields', () => {
    expect(expected).toBeGreaterThan(50);
    // 65 of 71 when this was written.
    expect(found / expected).toBeGreaterThanOrEqual(0.9);
  });
});
