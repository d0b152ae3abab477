// Ingest load generator: posts CloudWatch batches of Lambda log lines back to back for a fixed time, one request in flight.
import http from 'node:http';
import { nowMs } from '../lib/clock.js';
import { Histogram } from '../lib/histogram.js';
import { command, post, runWorker, workerConfig } from '../lib/worker-side.js';
import { createLogGenerator } from './cloudwatch-lines.js';

interface Config {
  url: string;
  key: string;
  seed: number;
  batchSize: number;
  durationMs: number;
}

function postJson(url: URL, key: string, body: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${key}` } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

runWorker(async () => {
  const cfg = workerConfig<Config>();
  const gen = createLogGenerator(cfg.seed, cfg.batchSize);
  const target = new URL('/api/v1/ingest/cloudwatch', cfg.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  // A few bodies ready before the clock starts; afterwards the next body is built while a request is in flight.
  let nextBody = JSON.stringify(gen.next());
  post({ type: 'ready' });
  await command('go');

  const latency = new Histogram();
  const statuses: Record<string, number> = {};
  let requests = 0;
  let sentEvents = 0;
  const started = nowMs();
  const stopAt = started + cfg.durationMs;
  while (nowMs() < stopAt) {
    const body = nextBody;
    const t0 = nowMs();
    const pending = postJson(target, cfg.key, body, agent);
    nextBody = JSON.stringify(gen.next());
    const status = await pending.catch(() => 0);
    latency.record(nowMs() - t0);
    statuses[status] = (statuses[status] ?? 0) + 1;
    requests++;
    if (status === 200) sentEvents += cfg.batchSize;
  }
  const ended = nowMs();
  agent.destroy();
  post({ type: 'done', started, ended, requests, sentEvents, statuses, latency: latency.toJSON() });
  await command('never');
});
