// SSE load generator: many raw node:http stream clients in one process, each logging (receipt time, last complete seq) per read.
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
}

const FRAME_END = Buffer.from('\n\n');
const ID = Buffer.from('id: ');
const RETRY = Buffer.from('retry:');

class Conn {
  status = 0;
  ready = false;
  closed = false;
  firstSeq = 0;
  lastSeq = 0;
  times: number[] = [];
  seqs: number[] = [];
  private carry: Buffer | null = null;

  constructor(private readonly log: boolean) {}

  /** Consumes one read: only complete frames count; the seq of the last complete event is logged with the read's time. */
  onData(chunk: Buffer): void {
    const t = nowMs();
    const buf = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    const end = buf.lastIndexOf(FRAME_END);
    if (end < 0) {
      this.carry = buf;
      return;
    }
    if (!this.ready && buf.indexOf(RETRY) >= 0) this.ready = true;
    if (this.firstSeq === 0) {
      const first = findId(buf, 0, end, false);
      if (first >= 0) this.firstSeq = parseSeq(buf, first + ID.length);
    }
    const last = findId(buf, 0, end, true);
    if (last >= 0) {
      const seq = parseSeq(buf, last + ID.length);
      if (seq > this.lastSeq) {
        this.lastSeq = seq;
        if (this.log) {
          this.times.push(t);
          this.seqs.push(seq);
        }
      }
    }
    this.carry = end + 2 < buf.length ? Buffer.from(buf.subarray(end + 2)) : null;
  }
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
    const req = http.request(`${cfg.url}/api/v1/events`, {
      agent: false,
      localAddress,
      headers: { accept: 'text/event-stream', authorization: `Bearer ${cfg.key}` },
    });
    const done = () => resolve();
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
      res.on('close', () => {
        conn.closed = true;
        done();
      });
    });
    req.on('error', () => {
      conn.closed = true;
      done();
    });
    req.end();
  });
}

runWorker(async () => {
  const cfg = workerConfig<Config>();
  const conns = Array.from({ length: cfg.count }, () => new Conn(!cfg.idle));
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
    const cmd = await command<{ type: string; seq?: number; timeoutMs?: number; batches?: [number, number, number][] }>('cmd');
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
        deliveries += c.lastSeq - c.firstSeq + 1;
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
      post({ type: 'report', deliveries, firstReceipt, lastReceipt, fromResponse: fromResponse.toJSON(), fromSend: fromSend.toJSON(), open: open.length, closed: conns.filter((c) => c.closed).length });
    } else {
      post({ type: 'count', open: open.length, closed: conns.filter((c) => c.closed).length });
    }
  }
});
