// Hostile ingest against a separate server process: a few KB of CloudWatch/Firehose input must not turn into hundreds
// of MB of memory, a 500 that senders retry forever, or 100,000 rows. Peak RSS is read from /proc.
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg, http, type TestOrg } from '../helpers/app.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { LogAudit } from './log-audit.js';
import { memoryOf, resetPeak } from './process-cost.js';
import { reap, redisPrefix, spawnServer, type ServerProcess } from './processes.js';

/** A subscription payload with the largest shared context CloudWatch's schema takes: 100 filter names of 1 KB. */
function amplified(events: number, name = 'amp') {
  return {
    messageType: 'DATA_MESSAGE',
    owner: '123456789012',
    logGroup: `/aws/lambda/${name}`,
    logStream: '2024/05/01/[$LATEST]amp',
    subscriptionFilters: Array.from({ length: 100 }, (_, i) => String(i).padEnd(1024, 'f')),
    logEvents: Array.from({ length: events }, () => ({ timestamp: 1714558800000, message: 'tool=search action=allow' })),
  };
}

const awslogs = (payload: unknown) => JSON.stringify({ awslogs: { data: gzipSync(JSON.stringify(payload)).toString('base64') } });

describe.runIf(realBackendAvailable)('ingest amplification and record floods', () => {
  const audit = new LogAudit('ingest-amplification');
  let db: { url: string; drop(): Promise<void> };
  let server: ServerProcess;
  let org: TestOrg;
  let sql: pg.Client;
  const figures: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await spawnServer({ name: 'amplification', env: { DATABASE_URL: db.url, REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: redisPrefix('amp'), ANOMALY_MIN_RATE: '1000000000' } });
    audit.output('server', server.output);
    org = await createOrg(server.url);
    audit.org(org);
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  });
  afterAll(async () => {
    console.log(figures.join('\n'));
    await sql?.end();
    await reap(server);
    await db?.drop();
    audit.assertClean();
  });

  /** Posts and measures how far the server's RSS peaked above its level before the request. */
  async function measured(what: string, path: string, body: string | Uint8Array, headers: Record<string, string>) {
    resetPeak(server.proc.pid!);
    const before = memoryOf(server.proc.pid!);
    const r = await http(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : new Uint8Array(body) });
    const after = memoryOf(server.proc.pid!);
    const growth = Math.max(0, after.peak - before.rss);
    figures.push(`${what}: ${body.length} bytes -> ${r.status}, RSS ${before.rss.toFixed(0)} MiB, peak while answering ${after.peak.toFixed(0)} MiB (+${growth.toFixed(1)})`);
    return { r, growth };
  }

  async function rows(): Promise<{ n: number; maxMetadataChars: number }> {
    const r = await sql.query<{ n: number; max: number | null }>('SELECT count(*)::int AS n, max(octet_length(metadata::text))::int AS max FROM audit_events WHERE org_id = $1', [org.id]);
    return { n: r.rows[0].n, maxMetadataChars: r.rows[0].max ?? 0 };
  }

  it('a 2 KB awslogs body of 1,500 events with 100 x 1 KB subscription filters stores 1,500 bounded rows without a memory spike', async () => {
    const body = awslogs(amplified(1_500));
    expect(body.length).toBeLessThan(3_000);
    const { r, growth } = await measured('awslogs 1,500 events x 100 KB of filters', '/api/v1/ingest/cloudwatch', body, { authorization: `Bearer ${org.key}` });
    expect(r.body).toEqual({ accepted: 1_500, duplicates: 0 });
    // Each event keeps the filter names CloudWatch allows (2 x 512 characters) and their count, not 100 KB.
    const stored = await rows();
    figures.push(`  stored: ${stored.n} rows, largest metadata ${stored.maxMetadataChars} characters`);
    expect(stored.n).toBe(1_500);
    expect(stored.maxMetadataChars).toBeLessThan(3_000);
    // Copying the filters into every row took ~440 MiB here; the bound is generous for a noisy machine.
    expect(growth).toBeLessThan(150);
  });

  it('a 3 KB body of 6,000 such events answers 200 on /cloudwatch and /firehose (it was a 500: RangeError in the append)', async () => {
    const payload = amplified(6_000, 'amp6k');
    const cw = await measured('awslogs 6,000 events', '/api/v1/ingest/cloudwatch', awslogs(payload), { authorization: `Bearer ${org.key}` });
    expect(cw.r.body).toEqual({ accepted: 6_000, duplicates: 0 });
    const firehose = JSON.stringify({ requestId: 'amp-fh-1', timestamp: Date.now(), records: [{ data: gzipSync(JSON.stringify(payload)).toString('base64') }] });
    expect(firehose.length).toBeLessThan(4_000);
    const fh = await measured('firehose 6,000 events', '/api/v1/ingest/firehose', firehose, { 'x-amz-firehose-access-key': org.key });
    expect(fh.r.status).toBe(200);
    expect(fh.r.body.requestId).toBe('amp-fh-1');
    expect((await rows()).n).toBe(1_500 + 12_000);
    expect(Math.max(cw.growth, fh.growth)).toBeLessThan(250);
  });

  it('a few hundred bytes of 100,000 empty Firehose records store nothing: 413 in Firehose shape (FIREHOSE_MAX_RECORDS)', async () => {
    const before = (await rows()).n;
    const json = JSON.stringify({ requestId: 'flood-1', timestamp: Date.now(), records: Array.from({ length: 100_000 }, () => ({ data: '' })) });
    const body = gzipSync(gzipSync(json, { level: 9 }), { level: 9 });
    expect(body.length).toBeLessThan(500);
    const { r } = await measured('firehose 100,000 empty records', '/api/v1/ingest/firehose', body, { 'x-amz-firehose-access-key': org.key, 'content-encoding': 'gzip' });
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ requestId: 'flood-1', errorMessage: expect.stringContaining('FIREHOSE_MAX_RECORDS') });
    // Within the bound, empty records are counted, never stored.
    const within = gzipSync(JSON.stringify({ requestId: 'flood-2', timestamp: Date.now(), records: Array.from({ length: 10_000 }, () => ({ data: '' })) }));
    const ok = await measured('firehose 10,000 empty records', '/api/v1/ingest/firehose', within, { 'x-amz-firehose-access-key': org.key, 'content-encoding': 'gzip' });
    expect(ok.r.status).toBe(200);
    expect((await rows()).n).toBe(before);
    await server.waitForOutput(/"requestId":"flood-2".*"emptyRecords":10000/);
  });
});
