// SSE load generator: many raw node:http stream clients in one process, each logging (receipt time, last complete seq) per read;
// optionally resuming as EventSource does (after the retry delay, with Last-Event-ID) and checking every id.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { nowMs, sleep } from '../lib/clock.js';
import { Histogram } from '../lib/histogram.js';
import { TMP } from '../lib/service.js';
import { command, post, runWorker, workerConfig } from '../lib/worker-side.js';

interface Config {
  url: string;
  key: string;
  count: number;
  /** Source addresses to spread connections over (each has its own ephemeral port range). */
  localAddresses?: string[];
  /** Idle mode keeps no receipt log (for the connection-memory scenario). */
  idle?: boolean;
  openConcurrency?: number;
  /**
   * Resume as EventSource does: a stream the server ends is opened again after the `retry:` delay it announced, with
   * `Last-Event-ID` set to the last complete event's id; every id is then checked to follow the one before it.
   */
  resume?: boolean;
}

const FRAME_END = Buffer.from('\n\n');
const ID = Buffer.from('id: ');
const LINE_ID = Buffer.from('\nid: ');
const RETRY = Buffer.from('retry:');

class Conn {
  status = 0;
  ready = false;
  closed = false;
  firstSeq = 0;
  lastSeq = 0;
  times: number[] = [];
  seqs: number[] = [];
  /** With `check`: events received, and ids that were not the one after the previous id (a repeat, or a gap). */
  received = 0;
  repeats = 0;
  gaps = 0;
  /** Times the server ended the stream (a resuming client then reconnects). */
  cuts = 0;
  retryMs = 3000;
  private carry: Buffer | null = null;

  constructor(
    private readonly log: boolean,
    private readonly check: boolean,
  ) {}

  /** Consumes one read: only complete frames count; the seq of the last complete event is logged with the read's time. */
  onData(chunk: Buffer): void {
    const t = nowMs();
    const buf = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    const end = buf.lastIndexOf(FRAME_END);
    if (end < 0) {
      this.carry = buf;
      return;
    }
    if (!this.ready) {
      const r = buf.indexOf(RETRY);
      if (r >= 0 && r < end) {
        this.ready = true;
        this.retryMs = parseSeq(buf, r + RETRY.length + 1);
      }
    }
    if (this.check) this.checkIds(buf, end);
    else {
      if (this.firstSeq === 0) {
        const first = findId(buf, 0, end, false);
        if (first >= 0) this.firstSeq = parseSeq(buf, first + ID.length);
      }
      const last = findId(buf, 0, end, true);
      if (last >= 0) {
        const seq = parseSeq(buf, last + ID.length);
        if (seq > this.lastSeq) this.lastSeq = seq;
      }
    }
    if (this.log && this.lastSeq > (this.seqs[this.seqs.length - 1] ?? 0)) {
      this.times.push(t);
      this.seqs.push(this.lastSeq);
    }
    this.carry = end + 2 < buf.length ? Buffer.from(buf.subarray(end + 2)) : null;
  }

  /** Every id of the complete frames in buf[0, end): each must be the one after the id before it. */
  private checkIds(buf: Buffer, end: number): void {
    let i = buf.length >= ID.length && buf.compare(ID, 0, ID.length, 0, ID.length) === 0 ? 0 : -1;
    if (i < 0) i = indexOfLineId(buf, 0, end);
    while (i >= 0 && i < end) {
      const seq = parseSeq(buf, i + ID.length);
      this.received++;
      if (this.firstSeq === 0) this.firstSeq = seq;
      else if (seq <= this.lastSeq) this.repeats++;
      else if (seq !== this.lastSeq + 1) this.gaps++;
      if (seq > this.lastSeq) this.lastSeq = seq;
      i = indexOfLineId(buf, i + ID.length, end);
    }
  }

  /** A resumed stream starts afresh: a frame cut in the middle is not an event (EventSource drops it too). */
  reset(): void {
    this.carry = null;
  }
}

/** Position of the next `id: ` that starts a line, from `from` (before `to`), or -1. */
function indexOfLineId(buf: Buffer, from: number, to: number): number {
  const i = buf.indexOf(LINE_ID, from);
  return i >= 0 && i < to ? i + 1 : -1;
}

/** Position of the first (or last) `id: ` at the start of a line within [from, to), or -1. */
function findId(buf: Buffer, from: number, to: number, last: boolean): number {
  let i = last ? buf.lastIndexOf(ID, to) : buf.indexOf(ID, from);
  while (i >= 0 && i < to) {
    if (i === 0 || buf[i - 1] === 10) return i;
    i = last ? (i > 0 ? buf.lastIndexOf(ID, i - 1) : -1) : buf.indexOf(ID, i + 1);
  }
  return -1;
}

function parseSeq(buf: Buffer, at: number): number {
  let n = 0;
  for (let i = at; i < buf.length; i++) {
    const c = buf[i];
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  return n;
}

function open(cfg: Config, conn: Conn, localAddress: string | undefined): Promise<void> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${cfg.key}` };
    if (cfg.resume && conn.lastSeq > 0) headers['last-event-id'] = String(conn.lastSeq);
    const req = http.request(`${cfg.url}/api/v1/events`, { agent: false, localAddress, headers });
    let settled = false;
    const done = () => {
      if (settled) return;
      settled = true;
      resolve();
    };
    // As EventSource: once a stream has opened, its end (or a failed reconnect) is followed by a new request after the
    // retry delay, resuming after the last complete event.
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      if (cfg.resume && conn.ready && !conn.closed) {
        conn.cuts++;
        conn.reset();
        setTimeout(() => void open(cfg, conn, localAddress), conn.retryMs);
      } else conn.closed = true;
      done();
    };
    req.on('response', (res) => {
      conn.status = res.statusCode ?? 0;
      if (conn.status !== 200) {
        res.resume();
        conn.closed = true;
        return done();
      }
      res.on('data', (c: Buffer) => {
        conn.onData(c);
        if (conn.ready) done();
      });
      res.on('close', end);
    });
    req.on('error', end);
    req.end();
  });
}

runWorker(async () => {
  const cfg = workerConfig<Config>();
  const conns = Array.from({ length: cfg.count }, () => new Conn(!cfg.idle, Boolean(cfg.resume)));
  const addrs = cfg.localAddresses?.length ? cfg.localAddresses : [undefined];
  let next = 0;
  await Promise.all(
    Array.from({ length: cfg.openConcurrency ?? 100 }, async () => {
      while (next < conns.length) {
        const i = next++;
        await open(cfg, conns[i], addrs[i % addrs.length]);
      }
    }),
  );
  const statuses: Record<string, number> = {};
  for (const c of conns) statuses[c.status] = (statuses[c.status] ?? 0) + 1;
  const live = () => conns.filter((c) => c.ready && !c.closed);
  post({ type: 'ready', open: live().length, statuses });

  for (;;) {
    const cmd = await command<{ type: string; seq?: number; timeoutMs?: number; batches?: [number, number, number][]; finalSeq?: number }>('cmd');
    const open = live();
    if (cmd.seq !== undefined) {
      // Wait until every connection has received up to seq (or the time is up).
      const deadline = nowMs() + (cmd.timeoutMs ?? 30_000);
      while (nowMs() < deadline && conns.some((c) => c.ready && !c.closed && c.lastSeq < cmd.seq!)) await sleep(20);
      post({ type: 'drained', reached: conns.filter((c) => c.lastSeq >= cmd.seq!).length, open: live().length, closed: conns.filter((c) => c.closed).length });
    } else if (cmd.batches) {
      // batches: [lastSeq, sendT, respT] sorted by lastSeq. For each connection and batch: first read that completed it.
      const fromResponse = new Histogram();
      const fromSend = new Histogram();
      let deliveries = 0;
      let firstReceipt = Infinity;
      let lastReceipt = 0;
      for (const c of conns) {
        if (c.firstSeq === 0) continue;
        deliveries += cfg.resume ? c.received : c.lastSeq - c.firstSeq + 1;
        if (c.times.length) {
          firstReceipt = Math.min(firstReceipt, c.times[0]);
          lastReceipt = Math.max(lastReceipt, c.times[c.times.length - 1]);
        }
        let j = 0;
        for (const [lastSeq, sendT, respT] of cmd.batches) {
          if (lastSeq < c.firstSeq) continue;
          while (j < c.seqs.length && c.seqs[j] < lastSeq) j++;
          if (j === c.seqs.length) break;
          fromResponse.record(c.times[j] - respT);
          fromSend.record(c.times[j] - sendT);
        }
      }
      if (process.env.BENCH_DEBUG) {
        // Per batch: the median and the slowest client, after the response (for looking at a run's timeline).
        const perBatch = cmd.batches.map(([lastSeq, sendT, respT]) => {
          const ts = conns.map((c) => c.times[c.seqs.findIndex((x) => x >= lastSeq)] - respT).filter(Number.isFinite).sort((a, b) => a - b);
          return [lastSeq, Math.round(sendT), Math.round(respT - sendT), Math.round(ts[ts.length >> 1]), Math.round(ts[ts.length - 1])];
        });
        writeFileSync(path.join(TMP, `receipts-${process.pid}.json`), JSON.stringify(perBatch));
      }
      const finalSeq = cmd.finalSeq ?? (cmd.batches.length ? cmd.batches[cmd.batches.length - 1][0] : 0);
      const resumes = cfg.resume
        ? {
            cuts: conns.reduce((a, c) => a + c.cuts, 0),
            clientsCut: conns.filter((c) => c.cuts > 0).length,
            inOrder: conns.filter((c) => c.firstSeq > 0 && c.repeats === 0 && c.gaps === 0).length,
            reachedLast: conns.filter((c) => c.lastSeq >= finalSeq).length,
            repeats: conns.reduce((a, c) => a + c.repeats, 0),
            gaps: conns.reduce((a, c) => a + c.gaps, 0),
          }
        : undefined;
      post({ type: 'report', deliveries, firstReceipt, lastReceipt, fromResponse: fromResponse.toJSON(), fromSend: fromSend.toJSON(), open: open.length, closed: conns.filter((c) => c.closed).length, resumes });
    } else {
      post({ type: 'count', open: open.length, closed: conns.filter((c) => c.closed).length });
    }
  }
});
