// Rate-spike detection on one instance, both backends, driven by real HTTP traffic: steady, burst, cooldown, independence, backfill, suspension.
import { describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, toolCall, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse, type SseClient } from '../helpers/sse.js';
import { anomalies, burst, FAST, putSettings, settle, storedAnomalies } from './anomaly-helpers.js';

describe.each(backendNames)('rate-spike detection on one instance (%s)', (backendName) => {
  const { app } = suiteApp(backendName);

  /** A fresh org (own keys, own settings) with FAST settings plus `extra`, and a stream of its events. */
  async function freshOrg(extra: Record<string, unknown> = {}): Promise<{ org: TestOrg; client: SseClient }> {
    const org = await createOrg(app.url);
    await putSettings(app.url, org.key, { ...FAST, ...extra });
    const client = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    expect(client.status).toBe(200);
    return { org, client };
  }

  it('raises nothing for a rate at the threshold', async () => {
    const { org, client } = await freshOrg();
    // 10 calls within 10 s = 60 calls/min: at the threshold, not over it.
    for (let i = 0; i < 10; i++) await postEvents(app.url, org.key, [toolCall(i, { toolName: 'steady' })]);
    await settle([app], org.key, client);
    expect(anomalies(client, { toolName: 'steady' })).toEqual([]);
    expect(await storedAnomalies(app.url, org.key, 'steady')).toEqual([]);
    client.close();
  });

  it('raises exactly one anomaly for a burst, with its figures, stored and streamed, naming the sessions', async () => {
    const { org, client } = await freshOrg();
    await burst(app.url, org.key, 12, { toolName: 'search', sessionId: 'b-1' });
    await client.waitFor((c) => anomalies(c, { toolName: 'search' }).length > 0, 20_000, 'anomaly');
    const [a] = anomalies(client, { toolName: 'search' });
    expect(a.json).toEqual({ type: 'anomaly', serverId: 'srv-1', anomalyType: 'rate_spike', toolName: 'search', currentRate: 72, threshold: 60, timestamp: expect.any(String) });
    expect(Date.now() - Date.parse(a.json.timestamp)).toBeLessThan(60_000);
    // More of the burst within the cooldown adds nothing.
    await burst(app.url, org.key, 12, { toolName: 'search' });
    await settle([app], org.key, client);
    expect(anomalies(client, { toolName: 'search' })).toHaveLength(1);
    const stored = await storedAnomalies(app.url, org.key, 'search');
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ serverId: 'srv-1', toolName: 'search', source: 'system' });
    expect(stored[0].metadata).toMatchObject({ anomalyType: 'rate_spike', windowSeconds: 10, windowCount: 12, baseline: 0, minRate: 60, multiplier: 3, sessions: ['b-1'] });
    expect(stored[0].metadata.suspendedSessions).toBeUndefined();
    // Detection alone suspends nothing.
    expect((await http(`${app.url}/api/v1/sessions/b-1`, { headers: bearer(org.key) })).body.status).toBe('active');
    const metrics = await app.ctx.metrics.anomalies.get();
    expect(metrics.values.find((v) => v.labels.anomaly_type === 'rate_spike')?.value).toBeGreaterThanOrEqual(1);
    client.close();
  });

  it('holds the cooldown, and fires again once a shortened cooldown has passed', async () => {
    const { org, client } = await freshOrg();
    await burst(app.url, org.key, 12, { toolName: 'cool' });
    await client.waitFor((c) => anomalies(c, { toolName: 'cool' }).length === 1, 20_000, 'first anomaly');
    await burst(app.url, org.key, 30, { toolName: 'cool' });
    await settle([app], org.key, client);
    expect(anomalies(client, { toolName: 'cool' })).toHaveLength(1);

    await putSettings(app.url, org.key, { cooldownSeconds: 1 });
    // Keep the rate up until the gate lets two more alerts through; each must wait out the 1 s cooldown.
    const deadline = Date.now() + 20_000;
    while (anomalies(client, { toolName: 'cool' }).length < 3 && Date.now() < deadline) await postEvents(app.url, org.key, [toolCall(0, { toolName: 'cool' })]);
    const times = anomalies(client, { toolName: 'cool' }).map((e) => Date.parse(e.json.timestamp));
    expect(times.length).toBeGreaterThanOrEqual(3);
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(1000);
    client.close();
  });

  it('keeps each (server, tool) apart: counts, thresholds and cooldowns', async () => {
    const { org, client } = await freshOrg();
    // 9 calls per key in one request: 54/min each; 108/min per server or per tool if they were lumped together.
    await postEvents(app.url, org.key, [
      ...Array.from({ length: 9 }, (_, i) => toolCall(i, { serverId: 'srv-1', toolName: 'search' })),
      ...Array.from({ length: 9 }, (_, i) => toolCall(i, { serverId: 'srv-1', toolName: 'fetch' })),
      ...Array.from({ length: 9 }, (_, i) => toolCall(i, { serverId: 'srv-2', toolName: 'search' })),
    ]);
    await settle([app], org.key, client);
    expect(anomalies(client).filter((e) => !String(e.json.toolName).startsWith('marker-'))).toEqual([]);

    await burst(app.url, org.key, 3, { serverId: 'srv-1', toolName: 'search' });
    await client.waitFor((c) => anomalies(c, { serverId: 'srv-1', toolName: 'search' }).length === 1, 20_000, 'srv-1/search');
    // The cooldown of srv-1/search does not silence the others.
    await burst(app.url, org.key, 3, { serverId: 'srv-1', toolName: 'fetch' });
    await burst(app.url, org.key, 3, { serverId: 'srv-2', toolName: 'search' });
    await settle([app], org.key, client);
    const found = anomalies(client)
      .filter((e) => !String(e.json.toolName).startsWith('marker-'))
      .map((e) => [e.json.serverId, e.json.toolName, e.json.currentRate, e.json.threshold]);
    expect(found).toEqual([
      ['srv-1', 'search', 72, 60],
      ['srv-1', 'fetch', 72, 60],
      ['srv-2', 'search', 72, 60],
    ]);
    client.close();
  });

  it('leaves backfilled old logs out of the rate', async () => {
    const { org, client } = await freshOrg();
    const old = new Date(Date.now() - 3 * 3_600_000).toISOString();
    await burst(app.url, org.key, 200, { toolName: 'backfill', timestamp: old });
    await settle([app], org.key, client);
    expect(anomalies(client, { toolName: 'backfill' })).toEqual([]);
    // Live calls are counted from zero: 11 more calls are 66/min.
    await burst(app.url, org.key, 11, { toolName: 'backfill' });
    await client.waitFor((c) => anomalies(c, { toolName: 'backfill' }).length === 1, 20_000, 'live anomaly');
    expect(anomalies(client, { toolName: 'backfill' })[0].json).toMatchObject({ currentRate: 66, threshold: 60 });
    client.close();
  });

  it('suspends the sessions that drove a spike when suspendSessionsOnSpike is on, and names them', async () => {
    const { org, client } = await freshOrg({ suspendSessionsOnSpike: true });
    // A bystander session on another tool, and one already suspended by an operator.
    await burst(app.url, org.key, 2, { toolName: 'other', sessionId: 'by-1' });
    await burst(app.url, org.key, 1, { toolName: 'spiky', sessionId: 'drv-0' });
    expect((await http(`${app.url}/api/v1/sessions/drv-0/suspend`, { method: 'POST', headers: bearer(org.key), json: {} })).status).toBe(200);
    await postEvents(app.url, org.key, [
      ...Array.from({ length: 4 }, (_, i) => toolCall(i, { toolName: 'spiky', sessionId: 'drv-1' })),
      ...Array.from({ length: 4 }, (_, i) => toolCall(i, { toolName: 'spiky', sessionId: 'drv-2' })),
      ...Array.from({ length: 3 }, (_, i) => toolCall(i, { toolName: 'spiky', sessionId: 'drv-3' })),
    ]);
    await client.waitFor((c) => c.events.filter((e) => e.event === 'session_update' && e.json.status === 'suspended').length === 4, 20_000, 'suspensions');
    const tail = client.events.slice(client.events.findIndex((e) => e.event === 'anomaly' && e.json.toolName === 'spiky'));
    expect(tail.slice(0, 4).map((e) => [e.event, e.json.sessionId ?? e.json.toolName, e.json.status ?? e.json.currentRate])).toEqual([
      ['anomaly', 'spiky', 72],
      ['session_update', 'drv-1', 'suspended'],
      ['session_update', 'drv-2', 'suspended'],
      ['session_update', 'drv-3', 'suspended'],
    ]);
    const [stored] = await storedAnomalies(app.url, org.key, 'spiky');
    expect(stored.metadata).toMatchObject({ sessions: ['drv-0', 'drv-1', 'drv-2', 'drv-3'], suspendedSessions: ['drv-1', 'drv-2', 'drv-3'] });
    for (const id of ['drv-1', 'drv-2', 'drv-3']) {
      const s = await http(`${app.url}/api/v1/sessions/${id}`, { headers: bearer(org.key) });
      expect(s.body).toMatchObject({ status: 'suspended', statusChangedBy: 'anomaly-detector', statusReason: expect.stringContaining('rate spike of spiky') });
    }
    expect((await http(`${app.url}/api/v1/sessions/by-1`, { headers: bearer(org.key) })).body.status).toBe('active');
    expect((await http(`${app.url}/api/v1/sessions/drv-0`, { headers: bearer(org.key) })).body.statusChangedBy).toContain('api_key:');
    const updates = await http(`${app.url}/api/v1/audit-events?type=session_update&sessionId=drv-1&order=asc`, { headers: bearer(org.key) });
    expect(updates.body.items.map((e: { source: string; metadata: { transition: string; by: string } }) => [e.source, e.metadata.transition, e.metadata.by])).toEqual([
      ['system', 'created', 'system'],
      ['system', 'suspended', 'anomaly-detector'],
    ]);
    client.close();
  });
});
