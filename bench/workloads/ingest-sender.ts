// Ingest load generator: posts CloudWatch batches of Lambda log lines back to back for a fixed time, one request in flight.
// The bodies are built before the clock starts, so the sender costs the machine little while it runs. `awslogs`: what a
// Lambda forwarder sends (gzip + base64, CloudWatch event ids), each body once (`bodies` of them at most). `plain`: spec
// bodies without event ids or Idempotency-Key, a ring sent round and round (every resent body is stored as new events).
// With `timeline`, it also reports every request's start and latency, and stops early on a 'stop' command.
import http from 'node:http';
import { nowMs } from '../lib/clock.js';
import { postBody, sendLoop } from '../lib/send-loop.js';
import { command, post, runWorker, workerConfig } from '../lib/worker-side.js';
import { createAwslogsBodies } from './awslogs-bodies.js';
import { createLogGenerator } from './cloudwatch-lines.js';

interface Config {
  url: string;
  key: string;
  seed: number;
  batchSize: number;
  durationMs: number;
  /** Bodies built before the clock starts and sent in turn (default RING). */
  ring?: number;
  /** `awslogs`: each body sent once (at most `bodies`); `plain` (default): the ring. */
  format?: 'awslogs' | 'plain';
  bodies?: number;
  timeline?: boolean;
}

/** Distinct bodies per sender: 16 x 500 lines is 8,000 log lines (about 2.5 MB). */
const RING = 16;

runWorker(async () => {
  const cfg = workerConfig<Config>();
  const target = new URL('/api/v1/ingest/cloudwatch', cfg.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let ring: Buffer[];
  let once = false;
  if (cfg.format === 'awslogs') {
    const gen = createAwslogsBodies(cfg.seed, cfg.batchSize);
    ring = Array.from({ length: cfg.bodies ?? 200 }, () => gen.next());
    once = true;
  } else {
    const gen = createLogGenerator(cfg.seed, cfg.batchSize);
    ring = Array.from({ length: cfg.ring ?? RING }, () => Buffer.from(JSON.stringify(gen.next())));
  }
  let turn = 0;
  const nextBody = () => ring[turn++ % ring.length];
  let stopped = false;
  // Each awslogs body goes once: the loop stops when the last has been sent.
  const exhausted = () => once && turn > ring.length;
  if (cfg.timeline) void command('stop').then(() => (stopped = true));
  /** [start (monotonic ms), latency ms] of every request, with `timeline`. */
  const timeline: [number, number][] = [];
  const send = (body: Buffer) => {
    const t0 = nowMs();
    return postBody(target, cfg.key, 'application/json', body, agent).then((status) => {
      if (cfg.timeline) timeline.push([t0, nowMs() - t0]);
      return status;
    });
  };
  post({ type: 'ready' });
  await command('go');

  let sentEvents = 0;
  const r = await sendLoop(
    cfg.durationMs,
    nextBody(),
    nextBody,
    send,
    (_body, status) => {
      if (status === 200) sentEvents += cfg.batchSize;
    },
    () => stopped || exhausted(),
  );
  agent.destroy();
  post({ type: 'done', started: r.started, ended: r.ended, requests: r.requests, sentEvents, exhausted: exhausted(), statuses: r.statuses, latency: r.latency.toJSON(), ...(cfg.timeline ? { timeline } : {}) });
  await command('never');
});
