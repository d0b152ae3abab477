// End to end: a real MCP client and server (@modelcontextprotocol/sdk), traced by @traceloop/instrumentation-mcp,
// exported by the OTLP protobuf exporter, appear on GET /api/v1/events as tool_call events.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { McpInstrumentation } from '@traceloop/instrumentation-mcp';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { bearer, createOrg, type TestOrg } from '../../helpers/app.js';
import { suiteApp } from '../../helpers/suite-app.js';
import { openSse } from '../../helpers/sse.js';
import { OTLP_BASE } from './otlp-kit.js';

describe('MCP client and server instrumented with OpenTelemetry → OTLP → audit stream', () => {
  const { app } = suiteApp('embedded');
  let org: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
  });

  it('a tools/call made by the client is streamed as a tool_call with its tool, session and latency', async () => {
    const sessionId = `mcp-session-${Date.now()}`;
    const exporter = new OTLPTraceExporter({ url: `${app.url}${OTLP_BASE}/v1/traces`, headers: bearer(org.key) });
    const memory = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'weather-agent', 'mcp.session.id': sessionId }),
      spanProcessors: [new SimpleSpanProcessor(exporter), new SimpleSpanProcessor(memory)],
    });
    const instrumentation = new McpInstrumentation();
    instrumentation.setTracerProvider(provider);
    instrumentation.manuallyInstrument({ Client });

    const server = new McpServer({ name: 'weather-server', version: '1.0.0' });
    server.registerTool('get_weather', { description: 'Weather for a city', inputSchema: { city: z.string() } }, async ({ city }) => {
      await new Promise((r) => setTimeout(r, 30)); // the tool's own work
      return { content: [{ type: 'text', text: `Sunny in ${city}` }] };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'weather-agent', version: '1.0.0' });
    await client.connect(clientSide);

    const stream = await openSse(`${app.url}/api/v1/events?types=tool_call`, bearer(org.key));
    try {
      expect(stream.status).toBe(200);
      const result = await client.callTool({ name: 'get_weather', arguments: { city: 'Lisbon' } });
      expect(result.content).toEqual([{ type: 'text', text: 'Sunny in Lisbon' }]);
      await provider.forceFlush();

      const toolSpan = memory.getFinishedSpans().find((s) => s.name === 'get_weather.tool')!;
      expect(toolSpan).toBeDefined();
      const durationMs = Math.round((toolSpan.duration[0] * 1e9 + toolSpan.duration[1]) / 1e6);
      expect(durationMs).toBeGreaterThanOrEqual(29);

      await stream.waitFor((c) => c.events.some((e) => e.json.toolName === 'get_weather'), 20_000, 'the tool_call event');
      const calls = stream.events.filter((e) => e.event === 'tool_call');
      // Only the tools/call span is a tool call: initialize and the session span are not streamed.
      expect(calls).toHaveLength(1);
      expect(calls[0].json).toEqual({
        type: 'tool_call',
        serverId: null,
        sessionId,
        toolName: 'get_weather',
        action: 'allow',
        latencyMs: durationMs,
        timestamp: new Date(toolSpan.startTime[0] * 1000 + Math.floor(toolSpan.startTime[1] / 1e6)).toISOString(),
      });
    } finally {
      stream.close();
      await client.close();
      await server.close();
      await provider.shutdown();
      instrumentation.disable();
    }
  });
});
