// A trivial MCP server (2.x packages, protocol 2026-07-28) in its own process: the tool `noop` answers at once.
import { createServer, type IncomingMessage } from 'node:http';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { post, runWorker } from '../lib/worker-side.js';

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

runWorker(async () => {
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'bench-upstream', version: '1.0.0' });
    server.registerTool('noop', { description: 'answers at once' }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
    return server;
  }, { legacy: 'reject' });
  const node = toNodeHandler(handler);
  const http = createServer(async (req, res) => {
    const body = req.method === 'POST' ? await readAll(req) : '';
    await node(req, res, body ? JSON.parse(body) : undefined);
  });
  http.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  post({ type: 'ready', url: `http://127.0.0.1:${(http.address() as { port: number }).port}/mcp` });
});
