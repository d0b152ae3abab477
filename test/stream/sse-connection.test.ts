// SseConnection on its own, over real sockets of a bare http.Server: filters, seq order and dedupe, replay then live,
// the outgoing buffer limit and clean closes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../src/audit/audit-types.js';
import { SseConnection, type CloseReason, type ConnectionFilter } from '../../src/stream/sse-connection.js';
import { EncodedBatch } from '../../src/stream/encoded-batch.js';
import { comment } from '../../src/stream/sse-format.js';
import { startBareSseServer, type BareSseServer } from '../helpers/bare-sse-server.js';
import { openSse, seqs, type SseClient } from '../helpers/sse.js';

const identity = { orgId: 'org', keyId: 'key', userId: null, loginSessionId: null };
const toolCall = (toolName: string): StreamEvent['payload'] => ({
  type: 'tool_call', serverId: 'srv', sessionId: null, toolName, action: null, latencyMs: null, timestamp: '2026-01-01T00:00:00.000Z',
});
const ev = (seq: number, over: Partial<StreamEvent> = {}): StreamEvent => ({
  seq, type: 'tool_call', serverId: 'srv', payload: toolCall(`t${seq}`), ...over,
});
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => ev(from + i));

describe('SseConnection over a bare http.Server', () => {
  let server: BareSseServer;
  beforeAll(async () => {
    server = await startBareSseServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  /** A client and the server side connection of its stream; `closed` resolves with the close reason. */
  async function connect(filter: ConnectionFilter = { types: null, serverId: null }, bufferLimitBytes = 1 << 20) {
    const res = server.nextResponse();
    const client: SseClient = await openSse(server.url);
    let delivered = 0;
    let onClosed: (r: CloseReason) => void = () => undefined;
    const closed = new Promise<CloseReason>((resolve) => (onClosed = resolve));
    const conn = new SseConnection(await res, identity, filter, { bufferLimitBytes, drainTimeoutMs: 30_000 }, (_c, reason) => onClosed(reason), (n) => (delivered += n));
    return { client, conn, closed, delivered: () => delivered };
  }

  it('delivers live events in seq order once, skipping what it has sent or skipped', async () => {
    const { client, conn, delivered } = await connect();
    conn.skipTo(2);
    conn.deliver(range(1, 4), new EncodedBatch(range(1, 4)));
    conn.deliver(range(4, 6), new EncodedBatch(range(4, 6)));
    conn.deliver(range(7, 8));
    conn.deliver(range(5, 9), new EncodedBatch(range(5, 9)));
    await client.waitForCount(7);
    expect(seqs(client)).toEqual([3, 4, 5, 6, 7, 8, 9]);
    expect(delivered()).toBe(7);
    client.close();
  });

  it('sends only events matching its type and server filters, and still advances past the others', async () => {
    const { client, conn } = await connect({ types: new Set(['anomaly']), serverId: 'a' });
    const events = [ev(1, { type: 'anomaly', serverId: 'a' }), ev(2, { serverId: 'a' }), ev(3, { type: 'anomaly', serverId: 'b' }), ev(4, { type: 'anomaly', serverId: 'a' })];
    conn.deliver(events, new EncodedBatch(events));
    // Seqs it filtered out are behind it too: a later run that repeats them sends only what is new and matches.
    const again = [ev(1, { type: 'anomaly', serverId: 'a' }), ev(3, { type: 'anomaly', serverId: 'a' }), ev(5, { type: 'anomaly', serverId: 'a' }), ev(6, { serverId: 'a' })];
    conn.deliver(again, new EncodedBatch(again));
    await client.waitForCount(3);
    expect(seqs(client)).toEqual([1, 4, 5]);
    client.close();
  });

  it('queues live events while replaying and sends, after the replay, only those past it', async () => {
    const { client, conn, delivered } = await connect();
    conn.hold();
    conn.deliver(range(4, 7));
    expect(conn.sendReplayed(range(1, 5), 5)).toBe(5);
    // A replay page also covers seqs with no streamed event (here 6): they are never sent later.
    expect(conn.sendReplayed([], 6)).toBe(0);
    conn.goLive();
    conn.deliver(range(7, 9));
    await client.waitForCount(8);
    expect(seqs(client)).toEqual([1, 2, 3, 4, 5, 7, 8, 9]);
    expect(delivered()).toBe(3);
    client.close();
  });

  it('cuts a client that stops reading once its backlog passes the buffer limit', async () => {
    const { client, conn, closed } = await connect(undefined, 64 * 1024);
    client.pause();
    const big = 'x'.repeat(16 * 1024);
    for (let seq = 1; !conn.closed && seq < 10_000; seq++) {
      conn.deliver([ev(seq, { payload: toolCall(big) })]);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    expect(await closed).toBe('slow');
    expect(conn.closeReason).toBe('slow');
    client.close();
  });

  it('ends with last words and reports the reason; a client leaving is reported as such', async () => {
    const a = await connect();
    a.conn.close('credentials', comment('credentials revoked or expired'));
    await a.client.ended;
    expect(a.client.comments).toContain('credentials revoked or expired');
    expect(await a.closed).toBe('credentials');

    const b = await connect();
    b.client.close();
    expect(await b.closed).toBe('client');
    expect(b.conn.closed).toBe(true);
    expect(() => b.conn.deliver(range(1, 2))).not.toThrow();
  });
});
