// Resumes on both backends, over a real listening server with real HTTP and EventSource clients: served from the
// organization's recent window of delivered frames when it covers the id (no database read), from the database before
// it, with every event once and in order, filters applied, the window's byte bounds held, and gaps never served across.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import { appendInTransaction } from '../../src/audit/event-log/append.js';
import { copySink } from '../../src/audit/event-log/copy-sink.js';
import { bearer, createOrg, postEvents, startApp, toolCall, type TestOrg } from '../helpers/app.js';
import { backendNames, realBackendAvailable } from '../helpers/backends.js';
import { consecutive, openEventSource } from '../helpers/event-source.js';
import { openSse, seqs, type SseClient } from '../helpers/sse.js';
import { suiteApp } from '../helpers/suite-app.js';

/** The value of a metric series on the instance at `url` (summed over series when labels are left out). */
async function metric(url: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries((m[2] ?? '').split(',').filter(Boolean).map((kv) => kv.split('=').map((s) => s.replace(/"/g, ''))));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

/** The resume counters and replayed events of an instance, by source. */
async function resumeCounts(url: string) {
  return {
    memory: await metric(url, 'audit_stream_sse_resumes_total', { from: 'memory' }),
    database: await metric(url, 'audit_stream_sse_resumes_total', { from: 'database' }),
    fromMemory: await metric(url, 'audit_stream_sse_events_replayed_total', { from: 'memory' }),
    fromDatabase: await metric(url, 'audit_stream_sse_events_replayed_total', { from: 'database' }),
  };
}

const stream = (url: string, org: TestOrg, query = '', lastEventId?: number) =>
  openSse(`${url}/api/v1/events${query}`, { ...bearer(org.key), ...(lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) }) });

/** Posts `batches` batches of `size` tool calls, `pad` (at most 190) characters of tool name each; returns how many were accepted. */
async function post(url: string, org: TestOrg, batches: number, size: number, pad = 0, extra: (i: number) => Record<string, unknown> = () => ({})): Promise<number> {
  let n = 0;
  for (let b = 0; b < batches; b++) {
    const r = await postEvents(url, org.key, Array.from({ length: size }, (_, i) => toolCall(b * size + i, { toolName: `t${'x'.repeat(pad)}`, sessionId: null, ...extra(b * size + i) })));
    expect(r.status).toBe(200);
    n += r.body.accepted;
  }
  return n;
}

/** A tool call stored without being published (as if its bus message had been lost). */
function unpublished(i: number): NewAuditEvent {
  return { type: 'tool_call', source: 'raw', occurredAt: new Date(), serverId: 'srv-1', sessionId: null, toolName: 'gap', action: 'allow', latencyMs: i, metadata: {}, dedupeKey: `raw:id:gap-${i}-${randomBytes(4).toString('hex')}` };
}

describe.each(backendNames)('stream resumes (%s)', (backendName) => {
  const { app, backend } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000', SSE_RETRY_MS: '100', SSE_BUFFER_LIMIT_BYTES: '65536', SSE_RECENT_WINDOW_BYTES: String(32 << 20) });

  it('serves a resume within the recent window from memory, without reading the database, exactly, then live', async () => {
    const org = await createOrg(app.url);
    const live = await stream(app.url, org);
    const total = await post(app.url, org, 3, 20);
    await live.waitForCount(total);
    const before = await resumeCounts(app.url);
    const all = seqs(live);

    const byHeader = await stream(app.url, org, '', all[24]);
    await byHeader.waitForCount(total - 25);
    expect(seqs(byHeader)).toEqual(all.slice(25));
    const byQuery = await stream(app.url, org, `?lastEventId=${all[49]}`);
    await byQuery.waitForCount(total - 50);
    expect(seqs(byQuery)).toEqual(all.slice(50));

    const after = await resumeCounts(app.url);
    expect(after.memory - before.memory).toBe(2);
    expect(after.database - before.database).toBe(0);
    expect(after.fromMemory - before.fromMemory).toBe(total - 25 + total - 50);
    expect(after.fromDatabase - before.fromDatabase).toBe(0);

    // Then live, with nothing twice and nothing lost.
    await post(app.url, org, 1, 5);
    await live.waitForCount(total + 5);
    await byHeader.waitForCount(total - 25 + 5);
    await byQuery.waitForCount(total - 50 + 5);
    expect(seqs(byHeader)).toEqual(seqs(live).slice(25));
    expect(seqs(byQuery)).toEqual(seqs(live).slice(50));
    for (const c of [live, byHeader, byQuery]) c.close();
  });

  it('gives a filtered resume exactly the events of its filter after the id, from memory, whole batches and a batch cut in the middle', async () => {
    const org = await createOrg(app.url);
    const all = await stream(app.url, org);
    const filteredLive = await stream(app.url, org, '?serverId=srv-a&types=tool_call');
    // Servers alternate a, a, b; new sessions add session_update events between the calls.
    const total = await post(app.url, org, 3, 30, 0, (i) => ({ serverId: i % 3 === 2 ? 'srv-b' : 'srv-a', sessionId: `sess-${Math.floor(i / 7)}` }));
    await all.waitFor((c) => c.events.length >= total + Math.ceil(90 / 7), 15_000, 'every event');
    const events = all.events.map((e) => ({ seq: Number(e.id), type: e.event, serverId: e.json.serverId as string | undefined }));
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(['tool_call', 'session_update']));
    const toolCallsOfA = (after: number) => events.filter((e) => e.seq > after && e.type === 'tool_call' && e.serverId === 'srv-a').map((e) => e.seq);
    const sessionUpdates = (after: number) => events.filter((e) => e.seq > after && e.type === 'session_update').map((e) => e.seq);
    await filteredLive.waitForCount(toolCallsOfA(0).length);
    const before = await resumeCounts(app.url);

    const firstSeq = events[0].seq;
    const middle = events[Math.floor(events.length / 2)].seq;
    const resumes: [SseClient, number[]][] = [
      [await stream(app.url, org, '?serverId=srv-a&types=tool_call', firstSeq - 1), toolCallsOfA(firstSeq - 1)],
      [await stream(app.url, org, '?serverId=srv-a&types=tool_call', middle), toolCallsOfA(middle)],
      [await stream(app.url, org, '?types=session_update', firstSeq - 1), sessionUpdates(firstSeq - 1)],
      [await stream(app.url, org, '?types=session_update', middle), sessionUpdates(middle)],
    ];
    for (const [c, expected] of resumes) {
      expect(expected.length).toBeGreaterThan(0);
      await c.waitForCount(expected.length);
      expect(seqs(c)).toEqual(expected);
    }
    expect(seqs(filteredLive)).toEqual(toolCallsOfA(0));
    const after = await resumeCounts(app.url);
    expect(after.memory - before.memory).toBe(4);
    expect(after.database - before.database).toBe(0);
    for (const c of [all, filteredLive, ...resumes.map(([c]) => c)]) c.close();
  });

  it('holds events committed without a bus message in the window in their place: the gap is filled before anything past it', async () => {
    const org = await createOrg(app.url);
    const live = await stream(app.url, org);
    await post(app.url, org, 1, 10);
    await live.waitForCount(10);
    await app.ctx.db.transaction((tx) => appendInTransaction(tx, org.id, { events: [unpublished(1), unpublished(2), unpublished(3)] }, copySink));
    await post(app.url, org, 1, 5);
    await live.waitForCount(18);
    expect(consecutive(seqs(live))).toBe(true);
    const before = await resumeCounts(app.url);
    const resumed = await stream(app.url, org, '', seqs(live)[4]);
    await resumed.waitForCount(13);
    expect(seqs(resumed)).toEqual(seqs(live).slice(5));
    expect(resumed.events.slice(5, 8).map((e) => e.json.toolName)).toEqual(['gap', 'gap', 'gap']);
    expect((await resumeCounts(app.url)).memory - before.memory).toBe(1);
    live.close();
    resumed.close();
  });

  it('cut during a burst, EventSource clients resume from memory and get every event once, in order; no replay from the database', async () => {
    const org = await createOrg(app.url);
    const url = `${app.url}/api/v1/events`;
    const keepingUp = await Promise.all(Array.from({ length: 3 }, () => openEventSource(url, bearer(org.key))));
    const slow = await Promise.all(Array.from({ length: 3 }, () => openEventSource(url, bearer(org.key))));
    for (const c of slow) c.pause();
    const cutsBefore = await metric(app.url, 'audit_stream_sse_slow_client_disconnects_total');
    const before = await resumeCounts(app.url);
    // 16,000 events of about 450 bytes: far more than the 64 KiB buffer and the sockets hold.
    const total = await post(app.url, org, 4, 4000, 190, () => ({ serverId: `s-${'y'.repeat(190)}` }));
    await expect.poll(() => metric(app.url, 'audit_stream_sse_slow_client_disconnects_total'), { timeout: 60_000 }).toBeGreaterThanOrEqual(cutsBefore + slow.length);
    for (const c of slow) c.resume();
    for (const c of [...keepingUp, ...slow]) {
      await c.waitFor((x) => x.events.length >= total, 120_000, `${total} events`);
      expect(c.events.length).toBe(total);
      expect(consecutive(c.events.map((e) => e.id))).toBe(true);
    }
    for (const c of slow) expect(c.opens).toBeGreaterThanOrEqual(2);
    const after = await resumeCounts(app.url);
    expect(after.memory - before.memory).toBeGreaterThanOrEqual(slow.length);
    expect(after.database - before.database).toBe(0);
    expect(after.fromDatabase - before.fromDatabase).toBe(0);
    for (const c of [...keepingUp, ...slow]) c.close();
  });

  it.runIf(backendName === 'real' && realBackendAvailable)('resumes on another instance (or after a restart), whose window is empty, from the database, exactly', async () => {
    const org = await createOrg(app.url);
    const live = await stream(app.url, org);
    const total = await post(app.url, org, 2, 25);
    await live.waitForCount(total);
    const other = await startApp({ ...(await backend.sibling()), ANOMALY_MIN_RATE: '1000000000' });
    try {
      const before = await resumeCounts(other.url);
      const resumed = await stream(other.url, org, '', seqs(live)[9]);
      await resumed.waitForCount(total - 10);
      expect(seqs(resumed)).toEqual(seqs(live).slice(10));
      const after = await resumeCounts(other.url);
      expect(after.database - before.database).toBe(1);
      expect(after.memory - before.memory).toBe(0);
      resumed.close();
    } finally {
      await other.close();
    }
    live.close();
  });
});

describe.each(backendNames)('stream resumes with a small recent window (%s)', (backendName) => {
  // 16 KiB per organization, 24 KiB for all of them together: two streaming organizations get 12 KiB each.
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000', SSE_RECENT_WINDOW_BYTES: '16384', SSE_RECENT_WINDOW_TOTAL_BYTES: '24576' });
  const windowBytes = () => metric(app.url, 'audit_stream_sse_recent_window_bytes');

  it('falls back to the database for an id before the window, exactly, and serves one within it from memory', async () => {
    const org = await createOrg(app.url);
    const live = await stream(app.url, org);
    const total = await post(app.url, org, 10, 20, 190); // about 70 KB of frames
    await live.waitForCount(total);
    const all = seqs(live);
    const before = await resumeCounts(app.url);
    const old = await stream(app.url, org, '', all[9]);
    await old.waitForCount(total - 10);
    expect(seqs(old)).toEqual(all.slice(10));
    const mid = await resumeCounts(app.url);
    expect(mid.database - before.database).toBe(1);
    expect(mid.memory - before.memory).toBe(0);
    expect(mid.fromDatabase - before.fromDatabase).toBe(total - 10);

    const recent = await stream(app.url, org, '', all[total - 6]);
    await recent.waitForCount(5);
    expect(seqs(recent)).toEqual(all.slice(total - 5));
    const after = await resumeCounts(app.url);
    expect(after.memory - mid.memory).toBe(1);
    expect(after.database - mid.database).toBe(0);
    for (const c of [live, old, recent]) c.close();
  });

  it('never holds more than its bytes, for one organization (batches larger than the window, filters) and for all of them together', async () => {
    const a = await createOrg(app.url);
    const liveA = await stream(app.url, a);
    const filteredA = await stream(app.url, a, '?serverId=srv-1');
    let sent = 0;
    let largest = 0;
    for (const [batches, size, pad] of [[8, 10, 190], [1, 100, 190], [6, 3, 50], [2, 60, 190]] as const) {
      for (let b = 0; b < batches; b++) {
        sent += await post(app.url, a, 1, size, pad);
        await liveA.waitForCount(sent);
        await filteredA.waitForCount(sent);
        const held = await windowBytes();
        largest = Math.max(largest, held);
        expect(held).toBeLessThanOrEqual(16384);
      }
    }
    expect(largest).toBeGreaterThan(8192); // it did fill up
    // A second organization streaming: both windows together stay within the total.
    const b = await createOrg(app.url);
    const liveB = await stream(app.url, b);
    expect(await windowBytes()).toBeLessThanOrEqual(24576);
    let sentB = 0;
    for (let i = 0; i < 6; i++) {
      sentB += await post(app.url, b, 1, 10, 190);
      sent += await post(app.url, a, 1, 10, 190);
      await liveB.waitForCount(sentB);
      await liveA.waitForCount(sent);
      expect(await windowBytes()).toBeLessThanOrEqual(24576);
    }
    expect(await windowBytes()).toBeGreaterThan(12288); // more than one share: both hold something
    for (const c of [liveA, filteredA, liveB]) c.close();
    // With no stream left, nothing is held.
    await expect.poll(windowBytes).toBe(0);
  });
});
