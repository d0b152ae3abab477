// Deduplication only by an identity the sender gave: stored as a 16-byte digest (the same as Postgres's
// audit_dedupe_digest, so rows stored before still match), none for an entry without one, which is always stored.
import { describe, expect, it } from 'vitest';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import { dedupeDigest, storedDedupeKey } from '../../src/audit/event-log/append.js';
import { backendNames, backendSinks } from '../helpers/backends.js';
import { bearer, createOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

const call = (key: string): NewAuditEvent => ({ type: 'tool_call', source: 'raw', occurredAt: new Date(1714558800000), serverId: 'srv', toolName: 't', metadata: {}, dedupeKey: key });

/**
 * Each sink appending optimistically (identities refused by the dedupe index, the transaction then run again with the
 * lookup: EVENT_LOG_OPTIMISTIC_APPEND, the default), and the COPY sink looking identities up before every append.
 */
const cases: [string, 'copy' | 'insert', string][] = [
  ...backendSinks.map(([b, s]): [string, 'copy' | 'insert', string] => [b, s, 'optimistic']),
  ...backendNames.map((b): [string, 'copy' | 'insert', string] => [b, 'copy', 'looked up first']),
];

describe.each(cases)('dedupe by sender identity (%s, %s sink, %s)', (backendName, sink, mode) => {
  const { app } = suiteApp(backendName as 'embedded' | 'real', { EVENT_LOG_SINK: sink, EVENT_LOG_OPTIMISTIC_APPEND: String(mode === 'optimistic'), ANOMALY_MIN_RATE: '1000000000' }, {}, { inject: true });

  const keyBytes = async (orgId: string) =>
    (await app.ctx.db.query<{ n: number | null }>('SELECT octet_length(dedupe_key) AS n FROM audit_events WHERE org_id = $1 ORDER BY seq', [orgId])).rows.map((r) => r.n);

  it('computes the digest Postgres computes, for short keys and for long ones (stored as their SHA-256 first)', async () => {
    for (const key of ['raw:id:1', `raw:id:${'x'.repeat(300)}`, 'cw:3825482746793164859235628543746294980254376541347592601\u00e9']) {
      const r = await app.ctx.db.query<{ d: string }>(`SELECT encode(audit_dedupe_digest($1), 'hex') AS d`, [storedDedupeKey(key)]);
      expect(dedupeDigest(storedDedupeKey(key)).toString('hex')).toBe(r.rows[0].d);
    }
  });

  it('stores a repeated identity once (in one request, in later ones, in one append of several), and every entry without one', async () => {
    const org = await createOrg(app.url);
    const long = `raw:id:long-${'x'.repeat(250)}`;
    const first = await app.ctx.eventLog.append(org.id, [call('raw:id:a'), call('raw:id:a'), call(long), call('once:raw:1'), call('once:raw:2')]);
    expect([first.accepted, first.duplicates]).toEqual([4, 1]);
    expect(first.seqs).toEqual([1, null, 2, 3, 4]);
    const again = await app.ctx.eventLog.append(org.id, [call(long), call('raw:id:a'), call('raw:id:b')]);
    expect([again.accepted, again.duplicates, again.seqs]).toEqual([1, 2, [null, null, 5]]);
    // Appends waiting together (group commit): a later one's repeat of an earlier one's identity is its duplicate.
    const together = await Promise.all([app.ctx.eventLog.append(org.id, [call('raw:id:c')]), app.ctx.eventLog.append(org.id, [call('raw:id:c'), call('raw:id:d')])]);
    expect(together.map((r) => [r.accepted, r.duplicates])).toEqual([[1, 0], [1, 1]]);
    expect(await keyBytes(org.id)).toEqual([16, 16, null, null, 16, 16, 16]);
  });

  it('answers an HTTP retry of identified entries as duplicates and stores the same call without identity again', async () => {
    const org = await createOrg(app.url);
    const body = [{ id: 'evt-1', serverId: 's', toolName: 'search' }, { serverId: 's', toolName: 'no_identity' }];
    const post = () => app.ctx.app.inject({ method: 'POST', url: '/api/v1/ingest/events', headers: bearer(org.key), payload: body });
    expect((await post()).json()).toEqual({ accepted: 2, duplicates: 0 });
    expect((await post()).json()).toEqual({ accepted: 1, duplicates: 1 });
    const listed = await app.ctx.app.inject({ url: '/api/v1/audit-events?limit=10&order=asc', headers: bearer(org.key) });
    expect(listed.json().items.map((e: { toolName: string }) => e.toolName)).toEqual(['search', 'no_identity', 'no_identity']);
  });
});
