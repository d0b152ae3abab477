// OTLP load generator: posts the same tool calls as OTLP protobuf trace exports or as raw JSON arrays, back to back for a fixed time.
import http from 'node:http';
import { loadOtlpTypes } from '../../src/ingest/otlp/proto-types.js';
import { nowMs } from '../lib/clock.js';
import { Histogram } from '../lib/histogram.js';
import { command, post, runWorker, workerConfig } from '../lib/worker-side.js';
import { otlpExport } from './otlp-export.js';
import { toolCallBatch } from './tool-calls.js';

interface Config {
  url: string;
  key: string;
  tag: string;
  batchSize: number;
  durationMs: number;
  mode: 'otlp' | 'raw';
}

function send(url: URL, key: string, contentType: string, body: Uint8Array, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': contentType, 'content-length': body.byteLength, authorization: `Bearer ${key}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

runWorker(async () => {
  const cfg = workerConfig<Config>();
  const types = loadOtlpTypes();
  const otlp = cfg.mode === 'otlp';
  const target = new URL(otlp ? '/api/v1/ingest/otlp/v1/traces' : '/api/v1/ingest/events', cfg.url);
  const contentType = otlp ? 'application/x-protobuf' : 'application/json';
  let batch = 0;
  const build = () => {
    const calls = toolCallBatch(cfg.tag, batch++, cfg.batchSize);
    return otlp ? otlpExport(types, calls) : Buffer.from(JSON.stringify(calls));
  };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let nextBody = build();
  post({ type: 'ready' });
  await command('go');

  const latency = new Histogram();
  const statuses: Record<string, number> = {};
  let requests = 0;
  let bodyBytes = 0;
  const started = nowMs();
  const stopAt = started + cfg.durationMs;
  while (nowMs() < stopAt) {
    const body = nextBody;
    const t0 = nowMs();
    const pending = send(target, cfg.key, contentType, body, agent);
    nextBody = build();
    const status = await pending.catch(() => 0);
    latency.record(nowMs() - t0);
    statuses[status] = (statuses[status] ?? 0) + 1;
    requests++;
    bodyBytes += body.byteLength;
  }
  const ended = nowMs();
  agent.destroy();
  post({ type: 'done', started, ended, requests, statuses, bodyBytes, latency: latency.toJSON() });
  await command('never');
});
