// Rate-spike detection on two instances sharing Postgres and Redis: shared counts, one alert per spike, shared cooldown and sessions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realBackend, realBackendAvailable, type Backend } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, startApp, toolCall, type RunningApp, type TestOrg } from '../helpers/app.js';
import { openSse, type SseClient } from '../helpers/sse.js';
import { anomalies, burst, FAST, putSettings, settle, storedAnomalies } from './anomaly-helpers.js';

describe.runIf(realBackendAvailable)('rate-spike detection on two instances (real)', () => {
  let backend: Backend;
  let a: RunningApp;
  let b: RunningApp;

  beforeAll(async () => {
    backend = await realBackend();
    a = await startApp(backend.env);
    b = await startApp(backend.env);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await backend?.cleanup();
  });

  async function alertsEmitted(): Promise<number> {
    let n = 0;
    for (const app of [a, b]) n += (await app.ctx.metrics.anomalies.get()).values.reduce((sum, v) => sum + v.value, 0);
    return n;
  }

  /** A fresh org with FAST settings (set through instance B, used by both) and streams on both instances. */
  async function freshOrg(extra: Record<string, unknown> = {}): Promise<{ org: TestOrg; onA: SseClient; onB: SseClient }> {
    const org = await createOrg(a.url);
    await putSettings(b.url, org.key, { ...FAST, ...extra });
    const onA = await openSse(`${a.url}/api/v1/events`, bearer(org.key));
    const onB = await openSse(`${b.url}/api/v1/events`, bearer(org.key));
    return { org, onA, onB };
  }

  it('raises nothing for a rate at the threshold split across both instances', async () => {
    const { org, onA, onB } = await freshOrg();
    for (let i = 0; i < 10; i++) await postEvents([a, b][i % 2].url, org.key, [toolCall(i, { toolName: 'steady' })]);
    await settle([a, b], org.key, onA);
    expect(anomalies(onA, { toolName: 'steady' })).toEqual([]);
    expect(await storedAnomalies(a.url, org.key, 'steady')).toEqual([]);
    onA.close();
    onB.close();
  });

  it('raises exactly one anomaly, with the figures of the whole burst, when neither half would alone', async () => {
    const { org, onA, onB } = await freshOrg();
    const before = await alertsEmitted();
    // 6 calls are 36/min on either instance alone; together 12 calls are 72/min > 60.
    await burst(a.url, org.key, 6, { toolName: 'split' });
    await burst(b.url, org.key, 6, { toolName: 'split' });
    for (const c of [onA, onB]) await c.waitFor((x) => anomalies(x, { toolName: 'split' }).length > 0, 20_000, 'anomaly');
    // The rest of the burst, on both instances at once, within the cooldown.
    await Promise.all(Array.from({ length: 10 }, (_, i) => burst([a, b][i % 2].url, org.key, 3, { toolName: 'split' })));
    await settle([a, b], org.key, onA);
    await onB.waitFor((x) => x.events.length >= onA.events.length, 20_000, 'the same events on B');
    for (const c of [onA, onB]) {
      const found = anomalies(c, { toolName: 'split' });
      expect(found).toHaveLength(1);
      expect(found[0].json).toEqual({ type: 'anomaly', serverId: 'srv-1', anomalyType: 'rate_spike', toolName: 'split', currentRate: 72, threshold: 60, timestamp: expect.any(String) });
    }
    expect(await storedAnomalies(b.url, org.key, 'split')).toHaveLength(1);
    // One instance emitted it (plus one per marker spike).
    expect((await alertsEmitted()) - before).toBe(1 + 2);
    onA.close();
    onB.close();
  });

  it('lets exactly one instance alert when both see a spike at the same moment', async () => {
    const { org, onA, onB } = await freshOrg();
    await Promise.all(Array.from({ length: 20 }, (_, i) => burst([a, b][i % 2].url, org.key, 2, { toolName: 'race' })));
    await settle([a, b], org.key, onA);
    const found = anomalies(onA, { toolName: 'race' });
    expect(found).toHaveLength(1);
    expect(found[0].json.currentRate).toBeGreaterThan(60);
    expect(found[0].json.currentRate).toBeLessThanOrEqual(240);
    expect(await storedAnomalies(a.url, org.key, 'race')).toHaveLength(1);
    onA.close();
    onB.close();
  });

  it('shares the cooldown between instances, and fires again after a shortened one', async () => {
    const { org, onA, onB } = await freshOrg();
    await burst(a.url, org.key, 12, { toolName: 'cool' });
    await onB.waitFor((c) => anomalies(c, { toolName: 'cool' }).length === 1, 20_000, 'first anomaly');
    await burst(b.url, org.key, 30, { toolName: 'cool' });
    await settle([a, b], org.key, onB);
    expect(anomalies(onB, { toolName: 'cool' })).toHaveLength(1);

    await putSettings(a.url, org.key, { cooldownSeconds: 1 });
    const deadline = Date.now() + 20_000;
    for (let i = 0; anomalies(onB, { toolName: 'cool' }).length < 3 && Date.now() < deadline; i++) {
      await postEvents([a, b][i % 2].url, org.key, [toolCall(i, { toolName: 'cool' })]);
    }
    const times = anomalies(onB, { toolName: 'cool' }).map((e) => Date.parse(e.json.timestamp));
    expect(times.length).toBeGreaterThanOrEqual(3);
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(1000);
    onA.close();
    onB.close();
  });

  it('keeps each (server, tool) apart across instances', async () => {
    const { org, onA, onB } = await freshOrg();
    await burst(a.url, org.key, 9, { serverId: 'srv-1', toolName: 'search' });
    await burst(b.url, org.key, 9, { serverId: 'srv-1', toolName: 'fetch' });
    await burst(a.url, org.key, 9, { serverId: 'srv-2', toolName: 'search' });
    await settle([a, b], org.key, onA);
    expect(anomalies(onA).filter((e) => !String(e.json.toolName).startsWith('marker-'))).toEqual([]);
    await burst(b.url, org.key, 3, { serverId: 'srv-1', toolName: 'search' });
    await burst(a.url, org.key, 3, { serverId: 'srv-1', toolName: 'fetch' });
    await burst(b.url, org.key, 3, { serverId: 'srv-2', toolName: 'search' });
    await settle([a, b], org.key, onA);
    const found = anomalies(onA)
      .filter((e) => !String(e.json.toolName).startsWith('marker-'))
      .map((e) => [e.json.serverId, e.json.toolName, e.json.currentRate]);
    expect(found).toEqual([
      ['srv-1', 'search', 72],
      ['srv-1', 'fetch', 72],
      ['srv-2', 'search', 72],
    ]);
    onA.close();
    onB.close();
  });

  it('suspends the driving sessions seen by either instance when suspendSessionsOnSpike is on', async () => {
    const { org, onA, onB } = await freshOrg({ suspendSessionsOnSpike: true });
    await burst(a.url, org.key, 6, { toolName: 'spiky', sessionId: 'on-a' });
    await burst(b.url, org.key, 6, { toolName: 'spiky', sessionId: 'on-b' });
    for (const c of [onA, onB]) {
      await c.waitFor((x) => x.events.filter((e) => e.event === 'session_update' && e.json.status === 'suspended').length === 2, 20_000, 'suspensions');
    }
    const [stored] = await storedAnomalies(a.url, org.key, 'spiky');
    expect(stored.metadata).toMatchObject({ sessions: ['on-a', 'on-b'], suspendedSessions: ['on-a', 'on-b'] });
    for (const id of ['on-a', 'on-b']) {
      expect((await http(`${b.url}/api/v1/sessions/${id}`, { headers: bearer(org.key) })).body).toMatchObject({ status: 'suspended', statusChangedBy: 'anomaly-detector' });
    }
    // Their later calls are still stored, flagged.
    await postEvents(a.url, org.key, [toolCall(99, { toolName: 'after', sessionId: 'on-b', id: 'after-spike' })]);
    const calls = await http(`${b.url}/api/v1/audit-events?type=tool_call&toolName=after`, { headers: bearer(org.key) });
    expect(calls.body.items[0].metadata).toMatchObject({ id: 'after-spike', sessionSuspended: true });
    onA.close();
    onB.close();
  });
});
