// Real MCP servers for the proxy tests, one per protocol revision: SDK 1.x (2025-11-25, sessions, GET stream) and the
// 2.x packages (2026-07-28, per-request), with the same tools: echo, progress (streams as it goes), fail, hang.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { McpServer as LegacyMcpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { createMcpHandler, McpServer as ModernMcpServer } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { z } from 'zod';

/** What the tests steer and observe of a server's tools. */
export interface ToolControl {
  /** Resolved by the test when the client has seen progress step n (the tool waits for it before the next step). */
  progressSeen: Map<number, () => void>;
  /** Calls of `hang` started (the test awaits one), and a way to let them finish. */
  hangStarted: ((args: unknown) => void)[];
  releaseHang: (() => void)[];
  /** Every tools/call the server ran: name and arguments. */
  calls: { name: string; args: unknown }[];
}

export interface Upstream {
  url: string;
  control: ToolControl;
  /** Raw requests the server received: method, headers, body. */
  requests: { method: string; headers: IncomingMessage['headers']; body: string }[];
  /** 2026-07-28: publishes notifications/tools/list_changed to open subscriptions/listen streams. */
  notifyToolsChanged?: () => void;
  close(): Promise<void>;
}

function newControl(): ToolControl {
  return { progressSeen: new Map(), hangStarted: [], releaseHang: [], calls: [] };
}

/** Waits for the test to say it saw progress step n (or a safety timeout, so a buffering proxy fails the test instead of hanging it). */
function awaitSeen(control: ToolControl, n: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, 5000);
    control.progressSeen.set(n, () => {
      clearTimeout(t);
      resolve();
    });
  });
}

type Notify = (progress: number, total: number) => Promise<void>;

async function runTool(control: ToolControl, name: string, args: Record<string, unknown>, notify: Notify, signal: AbortSignal) {
  control.calls.push({ name, args });
  if (name === 'echo') return { content: [{ type: 'text' as const, text: JSON.stringify(args) }] };
  if (name === 'fail') return { content: [{ type: 'text' as const, text: 'it failed' }], isError: true };
  if (name === 'progress') {
    const steps = Number(args.steps ?? 3);
    for (let i = 1; i <= steps; i++) {
      await notify(i, steps);
      await awaitSeen(control, i);
    }
    return { content: [{ type: 'text' as const, text: `done after ${steps} steps` }] };
  }
  if (name === 'hang') {
    await new Promise<void>((resolve) => {
      control.releaseHang.push(resolve);
      signal.addEventListener('abort', () => resolve(), { once: true });
      for (const l of control.hangStarted.splice(0)) l(args);
    });
    return { content: [{ type: 'text' as const, text: 'released' }] };
  }
  throw new Error(`unknown tool ${name}`);
}

const TOOL_NAMES = ['echo', 'fail', 'progress', 'hang'] as const;
const inputSchema = z.object({ text: z.string().optional(), steps: z.number().optional(), path: z.string().optional(), secret: z.string().optional(), blob: z.string().optional() }).passthrough();

function record(server: Server, requests: Upstream['requests']) {
  return (req: IncomingMessage, body: string) => {
    requests.push({ method: req.method ?? '', headers: req.headers, body });
    void server;
  };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
}

async function readAll(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** SDK 1.x server, stateful (Mcp-Session-Id), speaking 2025-11-25; `resumable`: with an event store (Last-Event-ID). */
export async function startLegacyUpstream(opts: { resumable?: boolean } = {}): Promise<Upstream> {
  const control = newControl();
  const requests: Upstream['requests'] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const build = () => {
    const server = new LegacyMcpServer({ name: 'legacy-upstream', version: '1.0.0' });
    for (const name of TOOL_NAMES) {
      server.registerTool(name, { description: `${name} tool`, inputSchema: inputSchema.shape }, async (args, extra) => {
        const token = extra._meta?.progressToken;
        const notify: Notify = async (progress, total) => {
          if (token !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total } });
        };
        return runTool(control, name, args as Record<string, unknown>, notify, extra.signal);
      });
    }
    return server;
  };
  const http = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const body = req.method === 'POST' ? await readAll(req) : '';
    record(http, requests)(req, body);
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
    if (!transport) {
      if (typeof sid === 'string') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
        return;
      }
      const t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void transports.set(id, t), ...(opts.resumable ? { eventStore: new InMemoryEventStore() } : {}) });
      t.onclose = () => {
        if (t.sessionId) transports.delete(t.sessionId);
      };
      await build().connect(t);
      transport = t;
    }
    await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
  });
  const url = await listen(http);
  return {
    url,
    control,
    requests,
    async close() {
      for (const r of control.releaseHang) r();
      for (const t of transports.values()) await t.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise((r) => http.close(() => r(undefined)));
    },
  };
}

/** 2.x server (createMcpHandler), speaking 2026-07-28 only. */
export async function startModernUpstream(): Promise<Upstream> {
  const control = newControl();
  const requests: Upstream['requests'] = [];
  const handler = createMcpHandler(
    () => {
      const server = new ModernMcpServer({ name: 'modern-upstream', version: '2.0.0' });
      for (const name of TOOL_NAMES) {
        server.registerTool(name, { description: `${name} tool`, inputSchema }, async (args, ctx) => {
          const token = ctx.mcpReq._meta?.progressToken;
          const notify: Notify = async (progress, total) => {
            if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress, total } });
          };
          return runTool(control, name, args as Record<string, unknown>, notify, ctx.mcpReq.signal);
        });
      }
      return server;
    },
    { legacy: 'reject' },
  );
  const node = toNodeHandler(handler);
  const http = createServer(async (req, res) => {
    const body = req.method === 'POST' ? await readAll(req) : '';
    requests.push({ method: req.method ?? '', headers: req.headers, body });
    await node(req, res, body ? JSON.parse(body) : undefined);
  });
  const url = await listen(http);
  return {
    url,
    control,
    requests,
    notifyToolsChanged: () => handler.notify.toolsChanged(),
    async close() {
      for (const r of control.releaseHang) r();
      await handler.close();
      http.closeAllConnections();
      await new Promise((r) => http.close(() => r(undefined)));
    },
  };
}
