// The agents and frameworks of the built-in profiles, emitting for real: the AI SDK with its mock model, LangChain.js
// tools under the OpenInference instrumentation, and the agents whose binaries cannot run here replayed through the
// OTel JS logs SDK with exactly the attribute set their source emits (the fixtures of test/fixtures/agents/).
import { context, trace, type HrTime } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { tool as langchainTool } from '@langchain/core/tools';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { fixtureJson } from '../ingest/ingest-kit.js';

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };

function plain(v: AnyValue): string | number | boolean {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  return v.doubleValue ?? '';
}

const attrs = (list: { key: string; value: AnyValue }[] = []) => Object.fromEntries(list.map((a) => [a.key, plain(a.value)]));
const nanosToMs = (ns: string | undefined) => (ns ? Number(BigInt(ns) / 1_000_000n) : undefined);

/** The fixture's log records emitted again by a real LoggerProvider: same resource, scope, body, attributes, times, ids. */
export async function replayAgentLogs(fixture: string): Promise<ReadableLogRecord[]> {
  const doc = fixtureJson(`agents/${fixture}`);
  const out: ReadableLogRecord[] = [];
  for (const rl of doc.resourceLogs) {
    const memory = new InMemoryLogRecordExporter();
    const provider = new LoggerProvider({ resource: resourceFromAttributes(attrs(rl.resource?.attributes)), processors: [new SimpleLogRecordProcessor({ exporter: memory })] });
    for (const sl of rl.scopeLogs) {
      const logger = provider.getLogger(sl.scope?.name ?? '', sl.scope?.version);
      for (const r of sl.logRecords) {
        const ctx = r.traceId && r.spanId ? trace.setSpanContext(context.active(), { traceId: r.traceId, spanId: r.spanId, traceFlags: 1 }) : undefined;
        logger.emit({
          body: r.body ? plain(r.body) : undefined,
          attributes: attrs(r.attributes),
          severityNumber: r.severityNumber,
          severityText: r.severityText,
          timestamp: nanosToMs(r.timeUnixNano),
          observedTimestamp: nanosToMs(r.observedTimeUnixNano),
          context: ctx,
        });
      }
    }
    await provider.forceFlush();
    out.push(...memory.getFinishedLogRecords());
    await provider.shutdown();
  }
  return out;
}

function tracerProvider(serviceName: string) {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': serviceName }), spanProcessors: [new SimpleSpanProcessor(memory)] });
  return { memory, provider };
}

const usage = { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } };

/**
 * generateText with telemetry on: the mock model asks for two tools in one step (`weather`, which answers, and
 * `deleteFile`, which throws), then answers. Returns every span the SDK made.
 */
export async function runAiSdk(sessionId: string): Promise<ReadableSpan[]> {
  const { memory, provider } = tracerProvider('weather-app');
  let step = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async () => {
      step++;
      if (step === 1) {
        return {
          content: [
            { type: 'tool-call', toolCallId: 'call-1', toolName: 'weather', input: '{"city":"Paris"}' },
            { type: 'tool-call', toolCallId: 'call-2', toolName: 'deleteFile', input: '{"path":"/tmp/x"}' },
          ],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        };
      }
      return { content: [{ type: 'text', text: 'It is sunny.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
    },
  });
  await generateText({
    model,
    prompt: 'Weather in Paris?',
    tools: {
      weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, celsius: 21 }) }),
      deleteFile: tool({
        inputSchema: z.object({ path: z.string() }),
        execute: async (): Promise<{ deleted: boolean }> => {
          throw new Error('read-only file system');
        },
      }),
    },
    stopWhen: stepCountIs(3),
    experimental_telemetry: { isEnabled: true, tracer: provider.getTracer('ai'), functionId: 'weather-chat', metadata: { sessionId } },
  });
  await provider.forceFlush();
  const spans = memory.getFinishedSpans();
  await provider.shutdown();
  return spans;
}

/** Two LangChain.js tool runs under the OpenInference instrumentation (`lookup_order` answers, `refund` throws). */
export async function runLangChainTools(sessionId: string): Promise<ReadableSpan[]> {
  const { memory, provider } = tracerProvider('support-agent');
  const instrumentation = new LangChainInstrumentation({ tracerProvider: provider });
  instrumentation.manuallyInstrument(CallbackManagerModule);
  const lookup = langchainTool(async ({ orderId }: { orderId: string }) => `order ${orderId}: shipped`, { name: 'lookup_order', description: 'Looks an order up', schema: z.object({ orderId: z.string() }) });
  const refund = langchainTool(
    async () => {
      throw new Error('refunds are disabled');
    },
    { name: 'refund', description: 'Refunds an order', schema: z.object({ orderId: z.string() }) },
  );
  await lookup.invoke({ orderId: 'A-1' }, { metadata: { session_id: sessionId } });
  await refund.invoke({ orderId: 'A-1' }, { metadata: { session_id: sessionId } }).catch(() => undefined);
  await provider.forceFlush();
  const spans = memory.getFinishedSpans();
  instrumentation.disable();
  await provider.shutdown();
  return spans;
}

/** A span's start in ms and its duration in whole ms, as the receiver computes them from the exported nanoseconds. */
export function spanTiming(span: ReadableSpan): { startMs: number; durationMs: number } {
  const ns = (t: HrTime) => BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]);
  const start = ns(span.startTime);
  return { startMs: Number(start / 1_000_000n), durationMs: Math.round(Number(ns(span.endTime) - start) / 1e6) };
}
