// Every read path of an organization goes through its read slots, on both backends: with its slot taken and its queue
// full, its listing, stats, export and resuming streams are refused with 429 and Retry-After (a stream that needs no
// replay still opens), another organization is not affected, and a read that found room in the queue waits its turn.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, toolCall, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse } from '../helpers/sse.js';

describe.each(backendNames)('organization read slots (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000', ORG_READ_SLOTS: '1', ORG_READ_QUEUE_MAX: '1' });
  let busy: TestOrg;
  let other: TestOrg;

  beforeAll(async () => {
    busy = await createOrg(app.url);
    other = await createOrg(app.url);
    for (const o of [busy, other]) expect((await postEvents(app.url, o.key, [toolCall(1, { sessionId: null }), toolCall(2, { sessionId: null })])).status).toBe(200);
  });

  /** Takes one of the organization's read slots (as a long read would) until the returned function is called. */
  function holdSlot(orgId: string): () => Promise<void> {
    let release!: () => void;
    const held = app.ctx.reads.run(orgId, () => new Promise<void>((resolve) => (release = resolve)));
    return async () => {
      release();
      await held;
    };
  }

  it('queues a read behind the running one, refuses new ones past the queue with 429, and leaves other organizations alone', async () => {
    const release = holdSlot(busy.id);
    // Room for one in the queue: this listing waits its turn.
    const waiting = http(`${app.url}/api/v1/audit-events?limit=10`, { headers: bearer(busy.key) });
    await expect.poll(() => app.ctx.reads.load(busy.id).waiting).toBe(1);
    // The queue is full: each new read of the organization is refused at once.
    for (const path of ['/api/v1/audit-events?limit=10', '/api/v1/audit-events/stats?window=1h', '/api/v1/audit-events/export']) {
      const r = await http(`${app.url}${path}`, { headers: bearer(busy.key) });
      expect({ path, status: r.status }).toEqual({ path, status: 429 });
      expect(r.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests', code: 'too_many_requests' });
      expect(r.body.message).toMatch(/ORG_READ_QUEUE_MAX/);
      expect(r.headers.get('retry-after')).toBe('1');
    }
    // A stream that would replay stored events is refused before it opens (the client retries and misses nothing);
    // one that starts live reads nothing stored and opens.
    const resuming = await openSse(`${app.url}/api/v1/events`, { ...bearer(busy.key), 'last-event-id': '0' });
    expect(resuming.status).toBe(429);
    expect(resuming.headers.get('retry-after')).toBe('1');
    expect(JSON.parse(resuming.body!)).toMatchObject({ statusCode: 429, code: 'too_many_requests' });
    const live = await openSse(`${app.url}/api/v1/events`, bearer(busy.key));
    expect(live.status).toBe(200);
    live.close();
    // Another organization's reads do not wait behind this one's.
    const theirs = await http(`${app.url}/api/v1/audit-events?limit=10`, { headers: bearer(other.key) });
    expect(theirs.status).toBe(200);
    expect(theirs.body.items).toHaveLength(2);
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).toMatch(/^audit_stream_org_read_refusals_total [1-9]/m);
    expect(metrics).toMatch(/^audit_stream_org_read_waits_total [1-9]/m);
    expect(metrics).toMatch(/^audit_stream_sse_streams_rejected_total\{limit="organization_reads"\} 1$/m);
    await release();
    const queued = await waiting;
    expect(queued.status).toBe(200);
    expect(queued.body.items).toHaveLength(2);
    expect((await http(`${app.url}/api/v1/audit-events?limit=10`, { headers: bearer(busy.key) })).status).toBe(200);
  });

  it('lets a resuming stream in while the queue has room; its replay waits its turn, then delivers every event', async () => {
    const release = holdSlot(busy.id);
    const resuming = await openSse(`${app.url}/api/v1/events`, { ...bearer(busy.key), 'last-event-id': '0' });
    expect(resuming.status).toBe(200);
    await expect.poll(() => app.ctx.reads.load(busy.id).waiting).toBe(1);
    expect(resuming.events).toHaveLength(0);
    await release();
    await resuming.waitForCount(2);
    expect(resuming.events.map((e) => e.id)).toEqual(['1', '2']);
    resuming.close();
  });
});
