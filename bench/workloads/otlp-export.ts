// The same tool calls as toolCallBatch, as an OTLP protobuf trace export: one MCP server span per call, one resource per server.
import { randomBytes } from 'node:crypto';
import type { OtlpTypes } from '../../src/ingest/otlp/proto-types.js';
import type { RawToolCall } from './tool-calls.js';

const str = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** ExportTraceServiceRequest bytes for `calls`: service.name = serverId; tool, session and action as span attributes. */
export function otlpExport(types: OtlpTypes, calls: RawToolCall[]): Uint8Array {
  const byServer = new Map<string, RawToolCall[]>();
  for (const c of calls) byServer.set(c.serverId, [...(byServer.get(c.serverId) ?? []), c]);
  const resourceSpans = [...byServer].map(([serverId, list]) => ({
    resource: { attributes: [str('service.name', serverId)] },
    scopeSpans: [
      {
        scope: { name: 'bench', version: '1.0.0' },
        spans: list.map((c) => {
          const start = BigInt(Date.parse(c.timestamp)) * 1_000_000n;
          return {
            traceId: randomBytes(16),
            spanId: randomBytes(8),
            name: `tools/call ${c.toolName}`,
            kind: 2,
            startTimeUnixNano: start.toString(),
            endTimeUnixNano: (start + BigInt(c.latencyMs) * 1_000_000n).toString(),
            attributes: [str('mcp.method.name', 'tools/call'), str('gen_ai.tool.name', c.toolName), str('mcp.session.id', c.sessionId), str('audit.action', c.action), str('gen_ai.tool.call.id', c.id)],
          };
        }),
      },
    ],
  }));
  return types.traceRequest.encode(types.traceRequest.fromObject({ resourceSpans })).finish();
}
