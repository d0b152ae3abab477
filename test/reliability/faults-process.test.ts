// Faults: an instance killed with SIGKILL, and one stopped with SIGTERM, while clients stream from it and traffic flows (real processes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createOrg, http, type TestOrg } from '../helpers/app.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { checkOrg, checkTrafficStored, expectOnly503WithRetryAfter, openResilient, storedIds, Traffic, type StreamExpectation } from './checker.js';
import { LogAudit } from './log-audit.js';
import { reap, redisPrefix, spawnServer, type ServerProcess } from './processes.js';

describe.runIf(realBackendAvailable)('instances killed and stopped', () => {
  const audit = new LogAudit('faults-process');
  let db: { url: string; drop(): Promise<void> };
  let env: Record<string, string>;
  const servers: ServerProcess[] = [];

  const spawn = async (name: string) => {
    const s = await spawnServer({ name, env });
    servers.push(s);
    audit.output(name, s.output);
    return s;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url, REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: redisPrefix('proc'), SSE_HEARTBEAT_MS: '1000', SSE_RETRY_MS: '100' };
  });

  afterAll(async () => {
    await Promise.all(
      servers.map(async (s) => {
        s.kill('SIGTERM');
        await s.exited;
      }),
    );
    await reap(...servers);
    await db?.drop();
    audit.assertClean();
  });

  /** Per org: two clients that start on `first` and fail over to `second`, and one client on `second`. */
  async function openClients(orgs: TestOrg[], first: ServerProcess, second: ServerProcess, tag: string) {
    const streams: { org: TestOrg; exp: StreamExpectation }[] = [];
    for (const [k, org] of orgs.entries()) {
      for (const [name, urls, startAfter] of [
        [`${tag} org${k} on ${first.name}, no Last-Event-ID`, [first.url, second.url], null],
        [`${tag} org${k} on ${first.name}, Last-Event-ID 0`, [first.url, second.url], 0],
        [`${tag} org${k} on ${second.name}`, [second.url, first.url], 0],
      ] as const) {
        const stream = await openResilient({ urls: () => [...urls], headers: bearer(org.key), startAfter, name });
        streams.push({ org, exp: { stream } });
      }
    }
    return streams;
  }

  it('SIGKILL: clients reconnect to another instance with Last-Event-ID and miss nothing; in-flight requests retried elsewhere land once', async () => {
    const a = await spawn('A (killed)');
    const b = await spawn('B');
    const orgs: TestOrg[] = [];
    for (let i = 0; i < 3; i++) orgs.push(await createOrg(b.url));
    orgs.forEach((o) => audit.org(o));
    const streams = await openClients(orgs, a, b, 'kill');
    // Requests alternate between A and B; a request that fails (A gone) is retried, same ids, on the other one.
    const traffic = new Traffic({ orgs, urls: () => [a.url, b.url], batchSize: 10, pauseMs: 10, retryMs: 50 }).start();
    await traffic.waitForMoreSuccesses(60, 30_000);

    a.kill('SIGKILL');
    const { signal } = await a.exited;
    expect(signal).toBe('SIGKILL');
    const onA = streams.filter((s) => s.exp.stream.opts.urls()[0] === a.url);
    // Every client that was on A is now on B.
    for (const { exp } of onA) await exp.stream.waitFor(() => exp.stream.current()?.url === b.url && exp.stream.current()?.status === 200, 30_000, 'reconnected to B');
    await traffic.waitForMoreSuccesses(60, 30_000);
    await traffic.stop();

    // A's clients were cut (not ended cleanly: nobody told them), and resumed from the last id they had.
    for (const { exp } of onA) {
      const cutConnection = exp.stream.connections.find((c) => c.url === a.url && c.status === 200)!;
      expect(cutConnection.end, exp.stream.opts.name).toBe('error');
      const resumed = exp.stream.connections.find((c) => c.url === b.url && c.status === 200)!;
      expect(resumed.lastEventId).not.toBeNull();
    }
    // Attempts that failed are connection errors against the dead instance; nothing else failed.
    expectOnly503WithRetryAfter(traffic.attempts(), true);
    expect(traffic.attempts().filter((x) => x.status === 'network-error' && x.url !== a.url)).toEqual([]);
    await checkTrafficStored(db.url, traffic);
    for (const org of orgs) await checkOrg(db.url, org.id, streams.filter((s) => s.org === org).map((s) => s.exp));
    const failed = traffic.attempts().filter((x) => x.status !== 200).length;
    console.log(`SIGKILL: ${traffic.requests.length} requests (${failed} attempts failed against the killed instance and were retried), ${onA.length} clients failed over`);
    for (const { exp } of streams) await exp.stream.stop();
  });

  it('SIGTERM: in-flight ingest requests complete, streams end cleanly, clients resume on another instance; exit code 0', async () => {
    const a = await spawn('C (stopped)');
    const b = await spawn('D');
    const orgs: TestOrg[] = [];
    for (let i = 0; i < 2; i++) orgs.push(await createOrg(b.url));
    orgs.forEach((o) => audit.org(o));
    const streams = await openClients(orgs, a, b, 'term');
    const traffic = new Traffic({ orgs, urls: () => [a.url, b.url], batchSize: 10, pauseMs: 10, retryMs: 50 }).start();
    await traffic.waitForMoreSuccesses(40, 30_000);

    // Large requests to the instance about to stop; SIGTERM arrives once it has received all of them.
    const big = Array.from({ length: 3 }, (_, k) => {
      const ids = Array.from({ length: 3000 }, (_, i) => `term-big-${traffic.tag}-${k}-${i}`);
      const body = ids.map((id, i) => ({ id, serverId: 'srv-big', toolName: `t-${i % 7}`, sessionId: `big-${k}` }));
      return { ids, answer: http(`${a.url}/api/v1/ingest/events?inflight=${k}`, { method: 'POST', headers: bearer(orgs[k % 2].key), json: body }), org: orgs[k % 2] };
    });
    for (let k = 0; k < big.length; k++) await a.waitForOutput(new RegExp(`"url":"/api/v1/ingest/events\\?inflight=${k}"`));
    a.kill('SIGTERM');
    for (const r of big) {
      const answer = await r.answer;
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toEqual({ accepted: 3000, duplicates: 0 });
      expect((await storedIds(db.url, r.org.id, r.ids)).size).toBe(3000);
    }
    expect(await a.exited).toEqual({ code: 0, signal: null });
    expect(a.output()).toContain('shut down cleanly');

    const onA = streams.filter((s) => s.exp.stream.opts.urls()[0] === a.url);
    for (const { exp } of onA) await exp.stream.waitFor(() => exp.stream.current()?.url === b.url && exp.stream.current()?.status === 200, 30_000, 'reconnected to D');
    await traffic.waitForMoreSuccesses(40, 30_000);
    await traffic.stop();

    // The stream on the stopping instance ended with the shutdown comment and a proper end of the response.
    for (const { exp } of onA) {
      const ended = exp.stream.connections.find((c) => c.url === a.url && c.status === 200)!;
      expect(ended.end, exp.stream.opts.name).toBe('eof');
      expect(ended.comments.map((c) => c.text)).toContain('server shutting down');
    }
    // A request that reached the stopping instance after it stopped accepting was refused (503, retried elsewhere)
    // or could not connect; none failed otherwise.
    expectOnly503WithRetryAfter(traffic.attempts(), true);
    await checkTrafficStored(db.url, traffic);
    for (const org of orgs) await checkOrg(db.url, org.id, streams.filter((s) => s.org === org).map((s) => s.exp));
    const refused = traffic.attempts().filter((x) => x.status !== 200);
    console.log(`SIGTERM: ${traffic.requests.length} requests, ${refused.length} attempts refused by the stopping instance (${[...new Set(refused.map((x) => x.status))].join(', ')}), ${onA.length} clients moved`);
    for (const { exp } of streams) await exp.stream.stop();
  });
});
