// The proxy's physical baseline: a bare node:http forwarder (no auth, no recording, no policy) that relays each request
// with its body and headers to the upstream and streams the answer back unchanged, over kept-alive connections.
import http from 'node:http';
import { post, runWorker, workerConfig } from '../lib/worker-side.js';

/** Hop-by-hop headers (RFC 9110 7.6.1) are the connection's, not the message's: never relayed. */
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);

function relayed(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const name in headers) if (!HOP.has(name)) out[name] = headers[name];
  return out;
}

runWorker(async () => {
  const { upstreamUrl } = workerConfig<{ upstreamUrl: string }>();
  const target = new URL(upstreamUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const server = http.createServer((req, res) => {
    res.socket?.setNoDelay(true);
    const up = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers: relayed(req.headers), agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, relayed(answer.headers));
        answer.pipe(res);
      },
    );
    up.on('socket', (s) => s.setNoDelay(true));
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  post({ type: 'ready', url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp` });
});
