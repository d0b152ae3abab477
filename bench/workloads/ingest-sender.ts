// Ingest load generator: posts CloudWatch batches of Lambda log lines back to back for a fixed time, one request in flight.
import http from 'node:http';
import { postBody, sendLoop } from '../lib/send-loop.js';
import { command, post, runWorker, workerConfig } from '../lib/worker-side.js';
import { createLogGenerator } from './cloudwatch-lines.js';

interface Config {
  url: string;
  key: string;
  seed: number;
  batchSize: number;
  durationMs: number;
}

runWorker(async () => {
  const cfg = workerConfig<Config>();
  const gen = createLogGenerator(cfg.seed, cfg.batchSize);
  const target = new URL('/api/v1/ingest/cloudwatch', cfg.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  // A few bodies ready before the clock starts; afterwards the next body is built while a request is in flight.
  const nextBody = JSON.stringify(gen.next());
  post({ type: 'ready' });
  await command('go');

  let sentEvents = 0;
  const r = await sendLoop(cfg.durationMs, nextBody, () => JSON.stringify(gen.next()), (body) => postBody(target, cfg.key, 'application/json', body, agent), (_body, status) => {
    if (status === 200) sentEvents += cfg.batchSize;
  });
  agent.destroy();
  post({ type: 'done', started: r.started, ended: r.ended, requests: r.requests, sentEvents, statuses: r.statuses, latency: r.latency.toJSON() });
  await command('never');
});
