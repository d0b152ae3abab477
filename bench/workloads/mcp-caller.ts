// MCP tools/call load generator (raw 2026-07-28 POSTs over kept-alive connections): n calls in flight for a while,
// each call's latency in a histogram; or, for the suspension case, one call after another until one is refused.
import http from 'node:http';
import { Histogram } from '../lib/histogram.js';
import { nowMs } from '../lib/clock.js';
import { command, post, runWorker } from '../lib/worker-side.js';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

interface Target {
  url: string;
  key: string;
  sessionId?: string;
}

function call(t: Target, id: number): Promise<{ status: number; refused: boolean }> {
  const meta = t.sessionId ? { ...META, 'io.audit-stream/sessionId': t.sessionId } : META;
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'noop', arguments: { n: id }, _meta: meta } });
  return new Promise((resolve, reject) => {
    const req = http.request(
      t.url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${t.key}`,
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'noop',
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, refused: text.includes('"isError":true') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

runWorker(async () => {
  post({ type: 'ready' });
  for (;;) {
    const cmd = await command<{ type: string; target: Target; concurrency: number; durationMs: number }>('run');
    const hist = new Histogram();
    let errors = 0;
    let id = 0;
    const end = nowMs() + cmd.durationMs;
    const started = nowMs();
    await Promise.all(
      Array.from({ length: cmd.concurrency }, async () => {
        while (nowMs() < end) {
          const t0 = nowMs();
          const r = await call(cmd.target, ++id).catch(() => ({ status: 0, refused: true }));
          if (r.status !== 200 || r.refused) errors++;
          else hist.record(nowMs() - t0);
        }
      }),
    );
    post({ type: 'done', histogram: hist.toJSON(), calls: hist.count, errors, seconds: (nowMs() - started) / 1000 });
  }
});
