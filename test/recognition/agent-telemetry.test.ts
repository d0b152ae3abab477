// Agent telemetry through the real OTel JS exporters (protobuf, JSON, gRPC) to the listening service: every tool call
// of Claude Code, Codex CLI, Gemini CLI, the AI SDK and OpenInference-instrumented LangChain.js is stored as exactly one
// tool_call, checked field by field through GET /api/v1/audit-events, with the profile that read it.
import { Metadata } from '@grpc/grpc-js';
import { OTLPLogExporter as GrpcLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { LogRecordExporter } from '@opentelemetry/sdk-logs';
import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, createOrg, http, type TestOrg } from '../helpers/app.js';
import { backendNames } from '../helpers/backends.js';
import { suiteApp } from '../helpers/suite-app.js';
import { fixtureJson, ingestedEvents, type StoredEvent } from '../ingest/ingest-kit.js';
import { exportLogs, exportSpans, OTLP_BASE } from '../ingest/otlp/otlp-kit.js';
import { replayAgentLogs, runAiSdk, runLangChainTools, spanTiming } from './agent-emitters.js';

/** What the expected files list per item, from a stored event. */
function fieldsOf(e: StoredEvent) {
  return {
    type: e.type,
    toolName: e.toolName,
    action: e.action,
    actionWord: e.metadata.actionWord ?? null,
    serverId: e.serverId,
    sessionId: e.sessionId,
    latencyMs: e.latencyMs,
    timestamp: e.occurredAt,
    traceId: e.metadata.traceId ?? null,
    toolCallId: e.metadata.toolCallId ?? null,
  };
}

describe.each(backendNames)('agent telemetry through the OTel JS exporters (%s backend)', (backendName) => {
  const { app } = suiteApp(backendName, { OTLP_GRPC_PORT: '0' });
  let grpcUrl: string;
  beforeAll(() => {
    grpcUrl = `http://127.0.0.1:${app.ctx.otlpGrpcPort()}`;
  });

  const grpcMetadata = (key: string) => {
    const m = new Metadata();
    m.set('authorization', `Bearer ${key}`);
    return m;
  };

  const agents: [string, string, string, (org: TestOrg) => LogRecordExporter][] = [
    ['Claude Code', 'claude-code-events', 'claude-code', (org) => new ProtoLogExporter({ url: `${app.url}${OTLP_BASE}/v1/logs`, headers: bearer(org.key) })],
    ['Codex CLI', 'codex-events', 'codex-cli', (org) => new JsonLogExporter({ url: `${app.url}${OTLP_BASE}/v1/logs`, headers: bearer(org.key) })],
    ['Gemini CLI', 'gemini-cli-events', 'gemini-cli', (org) => new GrpcLogExporter({ url: grpcUrl, metadata: grpcMetadata(org.key) })],
  ];

  it.each(agents)('%s log events (OTel JS logs SDK, its exact attribute set): one tool_call per tool call, field by field', async (_name, fixture, profile, exporterFor) => {
    const org = await createOrg(app.url);
    const exporter = exporterFor(org);
    expect(await exportLogs(exporter, await replayAgentLogs(`${fixture}.otlp.json`))).toEqual({ code: 0 });
    await exporter.shutdown();
    const expected = fixtureJson<{ items: { index: number; type: string | null; note?: string }[] }>(`agents/${fixture}.expected.json`).items.filter((i) => i.type !== null);
    const stored = await ingestedEvents(app.url, org.key);
    expect(stored).toHaveLength(expected.length);
    expected.forEach((want, i) => {
      const { index: _index, note: _note, ...fields } = want;
      const got = stored[i];
      if (want.type === 'log') expect({ index: want.index, type: got.type }).toEqual({ index: want.index, type: 'log' });
      else {
        expect({ index: want.index, ...fieldsOf(got) }).toEqual({ index: want.index, ...fields });
        expect(got.metadata.recognition).toEqual({ profile, version: 1 });
      }
    });
  });

  it('Vercel AI SDK ai.toolCall spans (generateText with the mock model, JSON exporter): the two tool calls, not the LLM calls', async () => {
    const org = await createOrg(app.url);
    const spans = await runAiSdk('chat-7f3a');
    const exporter = new JsonTraceExporter({ url: `${app.url}${OTLP_BASE}/v1/traces`, headers: bearer(org.key) });
    expect(await exportSpans(exporter, spans)).toEqual({ code: 0 });
    await exporter.shutdown();
    const stored = await ingestedEvents(app.url, org.key);
    const toolSpans = spans.filter((s) => s.name === 'ai.toolCall');
    expect(toolSpans).toHaveLength(2);
    expect(stored).toHaveLength(2);
    const byId = (id: string) => stored.find((e) => e.metadata.toolCallId === id)!;
    for (const span of toolSpans) {
      const id = String(span.attributes['ai.toolCall.id']);
      const failed = span.attributes['ai.toolCall.name'] === 'deleteFile';
      const { startMs, durationMs } = spanTiming(span);
      expect(fieldsOf(byId(id))).toEqual({
        type: 'tool_call',
        toolName: span.attributes['ai.toolCall.name'],
        action: 'allow',
        actionWord: failed ? 'status=error' : 'status=unset',
        serverId: null,
        sessionId: 'chat-7f3a',
        latencyMs: durationMs,
        timestamp: new Date(startMs).toISOString(),
        traceId: span.spanContext().traceId,
        toolCallId: id,
      });
      expect(byId(id).metadata.recognition).toEqual({ profile: 'vercel-ai-sdk', version: 1 });
    }
    // The LLM spans no profile read are visible as unrecognized, by span name.
    const report = await http(`${app.url}/api/v1/recognition/unrecognized?source=otlp`, { headers: bearer(org.key) });
    expect(report.status).toBe(200);
    const counts = Object.fromEntries(report.body.items.map((r: { name: string; count: number }) => [r.name, r.count]));
    expect(counts).toEqual({ 'ai.generateText.doGenerate': 2, 'ai.generateText': 1 });
    // Each sample: the record's name, scope and attributes as JSON, cut at RECOGNITION_UNRECOGNIZED_SAMPLE_BYTES (2048).
    expect(report.body.items[0].sample.startsWith('{"name":"ai.generateText.doGenerate","scope":"ai","attributes":{')).toBe(true);
    expect(Buffer.byteLength(report.body.items[0].sample)).toBeLessThanOrEqual(2048);
  });

  it('OpenInference TOOL spans (LangChain.js tools, gRPC exporter): one tool_call per tool run, a failing one still allow', async () => {
    const org = await createOrg(app.url);
    const spans = await runLangChainTools('thread-42');
    const exporter = new GrpcTraceExporter({ url: grpcUrl, metadata: grpcMetadata(org.key) });
    expect(await exportSpans(exporter, spans)).toEqual({ code: 0 });
    await exporter.shutdown();
    const stored = await ingestedEvents(app.url, org.key);
    const toolSpans = spans.filter((s) => s.attributes['openinference.span.kind'] === 'TOOL');
    expect(toolSpans.map((s) => s.name)).toEqual(['lookup_order', 'refund']);
    expect(stored.map((e) => e.toolName)).toEqual(['lookup_order', 'refund']);
    toolSpans.forEach((span, i) => {
      const { startMs, durationMs } = spanTiming(span);
      expect(fieldsOf(stored[i])).toEqual({
        type: 'tool_call',
        toolName: span.name,
        action: 'allow',
        actionWord: i === 0 ? 'status=ok' : 'status=error',
        serverId: null,
        sessionId: 'thread-42',
        latencyMs: durationMs,
        timestamp: new Date(startMs).toISOString(),
        traceId: span.spanContext().traceId,
        toolCallId: null,
      });
      expect(stored[i].metadata.recognition).toEqual({ profile: 'openinference-tool', version: 1 });
    });
  });
});
