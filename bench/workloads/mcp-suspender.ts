// Suspension-to-refusal: calls one session through instance B one after another; the runner suspends it through
// instance A; reports when the first refused call was sent and answered (wall clock, ms since epoch).
import http from 'node:http';
import { command, post, runWorker } from '../lib/worker-side.js';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
const agent = new http.Agent({ keepAlive: true });

function call(url: string, key: string, sessionId: string, id: number): Promise<boolean> {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'noop', arguments: {}, _meta: { ...META, 'io.audit-stream/sessionId': sessionId } } });
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), accept: 'application/json, text/event-stream', authorization: `Bearer ${key}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'noop' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve(text.includes('session suspended')));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

runWorker(async () => {
  post({ type: 'ready' });
  for (;;) {
    const cmd = await command<{ type: string; url: string; key: string; sessionId: string }>('watch');
    let id = 0;
    // A first call creates the session; then the runner is told to suspend it.
    await call(cmd.url, cmd.key, cmd.sessionId, ++id);
    post({ type: 'calling' });
    for (;;) {
      const sent = Date.now();
      if (await call(cmd.url, cmd.key, cmd.sessionId, ++id)) {
        post({ type: 'refused', sentAt: sent, answeredAt: Date.now(), calls: id });
        break;
      }
    }
  }
});
