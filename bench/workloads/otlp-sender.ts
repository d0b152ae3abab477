// OTLP load generator: posts the same tool calls as OTLP protobuf trace exports or as raw JSON arrays (or agent log
// events as OTLP/JSON log exports), back to back for a fixed time.
import http from 'node:http';
import { loadOtlpTypes } from '../../src/ingest/otlp/proto-types.js';
import { postBody, sendLoop } from '../lib/send-loop.js';
import { command, post, runWorker, workerConfig } from '../lib/worker-side.js';
import { otlpExport } from './otlp-export.js';
import { toolCallBatch } from './tool-calls.js';
import { agentLogsExport } from './agent-logs.js';

interface Config {
  url: string;
  key: string;
  tag: string;
  batchSize: number;
  durationMs: number;
  mode: 'otlp' | 'raw' | 'agent-logs';
}

runWorker(async () => {
  const cfg = workerConfig<Config>();
  const types = loadOtlpTypes();
  const otlp = cfg.mode === 'otlp';
  const logs = cfg.mode === 'agent-logs';
  const target = new URL(logs ? '/api/v1/ingest/otlp/v1/logs' : otlp ? '/api/v1/ingest/otlp/v1/traces' : '/api/v1/ingest/events', cfg.url);
  const contentType = otlp ? 'application/x-protobuf' : 'application/json';
  let batch = 0;
  const build = () => {
    if (logs) return agentLogsExport(cfg.batchSize, `${cfg.tag}-${batch++}`);
    const calls = toolCallBatch(cfg.tag, batch++, cfg.batchSize);
    return otlp ? otlpExport(types, calls) : Buffer.from(JSON.stringify(calls));
  };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const nextBody = build();
  post({ type: 'ready' });
  await command('go');

  let bodyBytes = 0;
  const r = await sendLoop(cfg.durationMs, nextBody, build, (body) => postBody(target, cfg.key, contentType, body, agent), (body) => {
    bodyBytes += body.byteLength;
  });
  agent.destroy();
  post({ type: 'done', started: r.started, ended: r.ended, requests: r.requests, statuses: r.statuses, bodyBytes, latency: r.latency.toJSON() });
  await command('never');
});
