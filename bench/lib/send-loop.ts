// A load generator's timed loop: one request in flight, the next body taken (or built) while it is, statuses and latency recorded.
import http from 'node:http';
import { nowMs } from './clock.js';
import { Histogram, type HistogramData } from './histogram.js';
import type { WorkerMessage } from './workers.js';

/** POSTs `body` with an API key; resolves with the status once the answer has been read. */
export function postBody(url: URL, key: string, contentType: string, body: string | Uint8Array, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': contentType, 'content-length': length, authorization: `Bearer ${key}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The `done` message a sender worker posts: its send loop's figures, the histogram serialized. */
export interface SendLoopDone extends WorkerMessage {
  started: number;
  ended: number;
  requests: number;
  statuses: Record<string, number>;
  latency: HistogramData;
}

export interface SendLoopResult {
  started: number;
  ended: number;
  requests: number;
  statuses: Record<string, number>;
  latency: Histogram;
}

/** Sends back to back for `durationMs` (or until `stop()`): `send(body)` with the body built beforehand; `sent(body, status)` after each. */
export async function sendLoop<B>(
  durationMs: number,
  first: B,
  build: () => B,
  send: (body: B) => Promise<number>,
  sent: (body: B, status: number) => void = () => undefined,
  stop: () => boolean = () => false,
): Promise<SendLoopResult> {
  const latency = new Histogram();
  const statuses: Record<string, number> = {};
  let requests = 0;
  let nextBody = first;
  const started = nowMs();
  const stopAt = started + durationMs;
  while (nowMs() < stopAt && !stop()) {
    const body = nextBody;
    const t0 = nowMs();
    const pending = send(body);
    nextBody = build();
    const status = await pending.catch(() => 0);
    latency.record(nowMs() - t0);
    statuses[status] = (statuses[status] ?? 0) + 1;
    requests++;
    sent(body, status);
  }
  return { started, ended: nowMs(), requests, statuses, latency };
}
