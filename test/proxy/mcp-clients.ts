// Real MCP clients for the proxy tests: SDK 1.x (2025-11-25) and the 2.x client (2026-07-28), with the API key header.
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';

export type Era = 'legacy' | 'modern';

export interface TestClient {
  era: Era;
  listTools(): Promise<{ tools: { name: string }[] }>;
  callTool(name: string, args: Record<string, unknown>, opts?: { onprogress?: (p: { progress: number; total?: number }) => void; meta?: Record<string, unknown>; timeoutMs?: number }): Promise<{ content?: unknown; isError?: boolean; _meta?: Record<string, unknown> }>;
  sessionId(): string | undefined;
  /** 2025-11-25: ends the MCP session (HTTP DELETE). */
  terminate(): Promise<void>;
  close(): Promise<void>;
}

export async function connectClient(era: Era, url: string, key: string, headers: Record<string, string> = {}): Promise<TestClient> {
  const requestInit = { headers: { authorization: `Bearer ${key}`, ...headers } };
  if (era === 'legacy') {
    const transport = new LegacyTransport(new URL(url), { requestInit });
    const client = new LegacyClient({ name: 'legacy-test-client', version: '1.0.0' });
    await client.connect(transport);
    return {
      era,
      listTools: () => client.listTools(),
      callTool: (name, args, opts = {}) =>
        client.callTool({ name, arguments: args, ...(opts.meta ? { _meta: opts.meta } : {}) }, undefined, { onprogress: opts.onprogress, timeout: opts.timeoutMs ?? 30_000 }) as never,
      sessionId: () => transport.sessionId,
      terminate: () => transport.terminateSession(),
      close: () => client.close(),
    };
  }
  const transport = new ModernTransport(new URL(url), { requestInit });
  const client = new ModernClient({ name: 'modern-test-client', version: '2.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } } as never);
  await client.connect(transport);
  return {
    era,
    listTools: () => client.listTools() as never,
    callTool: (name, args, opts = {}) =>
      client.callTool({ name, arguments: args, ...(opts.meta ? { _meta: opts.meta } : {}) }, { onprogress: opts.onprogress, timeout: opts.timeoutMs ?? 30_000 } as never) as never,
    sessionId: () => undefined,
    terminate: async () => undefined,
    close: () => client.close(),
  };
}
