// Relays one HTTP exchange to an upstream and its response back to the client as it arrives (no buffering: each chunk
// is written on), with backpressure, a deadline, cancellation when the client goes, and an optional watcher.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { ResolvedUpstream } from './org-proxy-config.js';
import { FORWARDED_RESPONSE_HEADERS, UpstreamError, type UpstreamClient, type UpstreamFailure } from './upstream-client.js';
import type { ResponseWatcher } from './response-watcher.js';

export interface RelayRequest {
  upstream: ResolvedUpstream;
  method: 'GET' | 'POST' | 'DELETE';
  clientHeaders: IncomingHttpHeaders;
  body?: Buffer;
  /** The client's response (hijacked from Fastify). */
  res: ServerResponse;
  /** The whole exchange's deadline; null for long-lived streams (only the connect deadline applies). */
  timeoutMs: number | null;
  drainTimeoutMs: number;
  /** Built once the response head is known (its content type), to read the response as it passes. */
  watch?: (contentType: string | undefined) => ResponseWatcher & { finish(): void };
  /** Called when the upstream's response head arrived and before it is written: may answer instead (returns true). */
  onHead?: (head: IncomingMessage) => boolean;
}

export interface RelayResult {
  /** The upstream's HTTP status, when its response began. */
  status: number | null;
  /** Why the exchange did not complete: the upstream failed or was too slow, or the client went away. */
  failure: UpstreamFailure | 'cancelled' | null;
  failureMessage: string | null;
  /** Whether anything was written to the client (then an error can no longer be answered as one). */
  answered: boolean;
  watcher: (ResponseWatcher & { finish(): void }) | null;
}

function responseHeaders(head: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of FORWARDED_RESPONSE_HEADERS) {
    const v = head.headers[name];
    if (typeof v === 'string') out[name] = v;
  }
  if ((out['content-type'] ?? '').toLowerCase().startsWith('text/event-stream')) {
    out['x-accel-buffering'] = 'no';
    out['cache-control'] ??= 'no-cache';
  }
  return out;
}

export async function relay(client: UpstreamClient, r: RelayRequest): Promise<RelayResult> {
  const controller = new AbortController();
  const result: RelayResult = { status: null, failure: null, failureMessage: null, answered: false, watcher: null };
  const fail = (failure: RelayResult['failure'], message: string) => {
    if (!result.failure) {
      result.failure = failure;
      result.failureMessage = message;
    }
  };
  let timer: NodeJS.Timeout | null = null;
  if (r.timeoutMs !== null) {
    timer = setTimeout(() => {
      fail('timeout', `the upstream did not answer within ${r.timeoutMs} ms`);
      controller.abort('timeout');
    }, r.timeoutMs);
  }
  // The client going away cancels the upstream exchange (for 2026-07-28 this is the cancellation signal itself).
  const onClientClose = () => {
    if (!r.res.writableFinished) {
      fail('cancelled', 'the client closed the connection');
      controller.abort('cancelled');
    }
  };
  r.res.on('close', onClientClose);
  try {
    let head: IncomingMessage;
    try {
      head = await client.send(r.upstream, { method: r.method, clientHeaders: r.clientHeaders, body: r.body, signal: controller.signal });
    } catch (err) {
      const e = err as UpstreamError;
      if (e instanceof UpstreamError) fail(e.failure === 'aborted' ? 'cancelled' : e.failure, e.message);
      else fail('unreachable', String((err as Error)?.message ?? err));
      return result;
    }
    result.status = head.statusCode ?? 502;
    if (r.onHead?.(head)) {
      head.resume();
      result.answered = true;
      return result;
    }
    const headers = responseHeaders(head);
    const watcher = r.watch ? r.watch(headers['content-type']) : null;
    result.watcher = watcher;
    if (r.res.destroyed) {
      head.destroy();
      return result;
    }
    // Each chunk leaves at once: without this, a small last chunk (the end of a chunked body) waits for the client's
    // delayed ACK of the one before (Nagle), tens of milliseconds per call.
    r.res.socket?.setNoDelay(true);
    r.res.writeHead(result.status, headers);
    // A stream's head goes at once (the client learns it is open); any other head leaves with the first chunk, in one
    // packet (a head sent alone and then a small body would wait on the client's delayed ACK).
    if (headers['x-accel-buffering']) r.res.flushHeaders();
    result.answered = true;
    await new Promise<void>((resolve) => {
      let drainTimer: NodeJS.Timeout | null = null;
      const finish = () => {
        if (drainTimer) clearTimeout(drainTimer);
        resolve();
      };
      // What the upstream sent in one read (a chunk and, often, its body's end) leaves in one write: the socket is
      // corked on a chunk and uncorked once this turn of the event loop is over (end() flushes at once); nothing is
      // held longer, so SSE events still reach the client as they come.
      let corked = false;
      const uncork = () => {
        corked = false;
        r.res.uncork();
      };
      head.on('data', (chunk: Buffer) => {
        watcher?.push(chunk);
        if (!corked) {
          corked = true;
          r.res.cork();
          setImmediate(uncork);
        }
        if (!r.res.write(chunk)) {
          head.pause();
          drainTimer = setTimeout(() => {
            fail('cancelled', `the client read nothing for ${r.drainTimeoutMs} ms`);
            r.res.destroy();
            head.destroy();
          }, r.drainTimeoutMs);
          r.res.once('drain', () => {
            if (drainTimer) clearTimeout(drainTimer);
            drainTimer = null;
            head.resume();
          });
        }
      });
      head.on('end', () => {
        watcher?.finish();
        r.res.end();
        finish();
      });
      head.on('error', (err: Error) => {
        watcher?.finish();
        if (controller.signal.aborted) fail(controller.signal.reason === 'timeout' ? 'timeout' : 'cancelled', String(controller.signal.reason));
        else fail('unreachable', `the upstream's response broke off: ${err.message}`);
        finish();
      });
      head.on('close', () => {
        if (!head.complete) {
          watcher?.finish();
          if (!result.failure) fail(controller.signal.aborted ? (controller.signal.reason === 'timeout' ? 'timeout' : 'cancelled') : 'unreachable', "the upstream's response broke off");
        }
        finish();
      });
    });
    return result;
  } finally {
    if (timer) clearTimeout(timer);
    r.res.off('close', onClientClose);
  }
}
