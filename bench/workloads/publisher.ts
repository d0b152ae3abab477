// Stream load generator: posts raw tool-call batches, as fast as the server answers (n in flight) for a time or for a
// number of batches (a burst), or at a fixed rate.
import http from 'node:http';
import { nowMs, sleep } from '../lib/clock.js';
import { command, post, runWorker, workerConfig } from '../lib/worker-side.js';
import { toolCallBatch } from './tool-calls.js';

interface Config {
  url: string;
  path: string;
  key: string;
  tag: string;
  batchSize: number;
  durationMs: number;
  /** Requests in flight in 'max' mode. */
  concurrency: number;
  /** Events per second in 'paced' mode. */
  rate?: number;
  /** In 'burst' mode: how many batches, posted as fast as the server answers (n in flight), whatever the time. */
  batches?: number;
  mode: 'max' | 'paced' | 'burst';
}

export interface SentBatch {
  batch: number;
  sendT: number;
  respT: number;
  status: number;
  /** The bare baseline server answers with the seq of the batch's last event; the service does not (looked up later). */
  lastSeq: number | null;
}

function postJson(url: URL, key: string, body: string, agent: http.Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${key}` } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

runWorker(async () => {
  const cfg = workerConfig<Config>();
  const target = new URL(cfg.path, cfg.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(cfg.concurrency, 8) });
  post({ type: 'ready' });
  await command('go');

  const sent: SentBatch[] = [];
  let next = 0;
  const started = nowMs();
  const stopAt = started + cfg.durationMs;

  async function sendOne(batch: number): Promise<void> {
    const body = JSON.stringify(toolCallBatch(cfg.tag, batch, cfg.batchSize));
    const sendT = nowMs();
    const r = await postJson(target, cfg.key, body, agent).catch(() => ({ status: 0, body: '' }));
    const respT = nowMs();
    let lastSeq: number | null = null;
    try {
      lastSeq = (JSON.parse(r.body) as { lastSeq?: number }).lastSeq ?? null;
    } catch {
      /* not JSON */
    }
    sent.push({ batch, sendT, respT, status: r.status, lastSeq });
  }

  if (cfg.mode === 'max' || cfg.mode === 'burst') {
    const more = cfg.mode === 'burst' ? () => next < (cfg.batches ?? 0) : () => nowMs() < stopAt;
    await Promise.all(
      Array.from({ length: cfg.concurrency }, async () => {
        while (more()) await sendOne(next++);
      }),
    );
  } else {
    const interval = (1000 * cfg.batchSize) / (cfg.rate ?? 500);
    const inflight: Promise<void>[] = [];
    for (let i = 0; started + i * interval < stopAt; i++) {
      const due = started + i * interval;
      const wait = due - nowMs();
      if (wait > 0) await sleep(wait);
      inflight.push(sendOne(next++));
    }
    await Promise.all(inflight);
  }
  agent.destroy();
  post({ type: 'done', started, ended: nowMs(), sent });
  await command('never');
});
