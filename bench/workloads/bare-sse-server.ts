// The fan-out baseline: a bare node:http SSE server that frames posted tool calls like the service and writes each batch once per client.
import http, { type ServerResponse } from 'node:http';

interface RawEvent {
  serverId: string;
  sessionId?: string | null;
  toolName: string;
  action?: string | null;
  latencyMs?: number | null;
  timestamp?: string;
}

const clients = new Set<ServerResponse>();
let seq = 0;

const server = http.createServer((req, res) => {
  if (req.url === '/healthz') {
    res.end('{"status":"ok"}');
    return;
  }
  if (req.method === 'GET' && req.url?.startsWith('/api/v1/events')) {
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no', Connection: 'keep-alive' });
    res.socket?.setNoDelay(true);
    res.write('retry: 2000\n\n');
    clients.add(res);
    res.on('close', () => clients.delete(res));
    return;
  }
  if (req.method === 'POST' && req.url === '/api/v1/ingest/events') {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const events = JSON.parse(Buffer.concat(parts).toString('utf8')) as RawEvent[];
      // The same bytes as the service: one frame per event, serialized once, one write per client per batch.
      let chunk = '';
      for (const e of events) {
        const payload = {
          type: 'tool_call',
          serverId: e.serverId,
          sessionId: e.sessionId ?? null,
          toolName: e.toolName,
          action: e.action ?? null,
          latencyMs: e.latencyMs ?? null,
          timestamp: new Date(e.timestamp ?? Date.now()).toISOString(),
        };
        chunk += `id: ${++seq}\nevent: tool_call\ndata: ${JSON.stringify(payload)}\n\n`;
      }
      for (const c of clients) c.write(chunk);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ accepted: events.length, duplicates: 0, lastSeq: seq }));
    });
    return;
  }
  res.writeHead(404).end();
});

const heartbeat = setInterval(() => {
  for (const c of clients) c.write(': heartbeat\n\n');
}, 15_000);
heartbeat.unref();

server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => {
  for (const c of clients) c.end();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
});
