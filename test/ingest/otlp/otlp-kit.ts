// Shared pieces of the OTLP tests: real OpenTelemetry SDK spans and log records, exported by the real OTLP exporters.
import { context, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor, type LogRecordExporter, type ReadableLogRecord } from '@opentelemetry/sdk-logs';

export const OTLP_BASE = '/api/v1/ingest/otlp';

export interface SpanSpec {
  name: string;
  kind: SpanKind;
  attributes: Attributes;
  /** Unix ms. */
  start: number;
  end: number;
  error?: string;
}

/** Finished SDK spans of one resource, made by a real BasicTracerProvider. */
export async function makeSpans(resource: Attributes, specs: SpanSpec[]): Promise<ReadableSpan[]> {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes(resource), spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer('otlp-test', '1.0.0');
  for (const s of specs) {
    const span = tracer.startSpan(s.name, { kind: s.kind, attributes: s.attributes, startTime: s.start });
    if (s.error) span.setStatus({ code: SpanStatusCode.ERROR, message: s.error });
    span.end(s.end);
  }
  await provider.forceFlush();
  const spans = memory.getFinishedSpans();
  await provider.shutdown();
  return spans;
}

/** Exports with a real exporter and resolves with its result code (0 success, 1 failed) and error. */
export function exportSpans(exporter: SpanExporter, spans: ReadableSpan[]): Promise<{ code: number; error?: Error }> {
  return new Promise((resolve) => exporter.export(spans, resolve));
}

export interface LogSpec {
  body: string | Record<string, unknown>;
  attributes?: Record<string, string | number | boolean>;
  /** OTLP SeverityNumber (9 INFO, 17 ERROR). */
  severityNumber?: number;
  severityText?: string;
  /** Unix ms. */
  timestamp?: number;
  /** Trace and span ids (hex) to attach, as a log emitted inside that span would carry. */
  spanContext?: { traceId: string; spanId: string };
}

/** SDK log records of one resource, made by a real LoggerProvider. */
export async function makeLogRecords(resource: Attributes, specs: LogSpec[]): Promise<ReadableLogRecord[]> {
  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ resource: resourceFromAttributes(resource), processors: [new SimpleLogRecordProcessor({ exporter: memory })] });
  const logger = provider.getLogger('otlp-test', '1.0.0');
  for (const s of specs) {
    const ctx = s.spanContext ? trace.setSpanContext(context.active(), { ...s.spanContext, traceFlags: 1 }) : undefined;
    logger.emit({
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      body: s.body as any,
      attributes: s.attributes,
      severityNumber: s.severityNumber,
      severityText: s.severityText,
      timestamp: s.timestamp,
      context: ctx,
    });
  }
  await provider.forceFlush();
  const records = memory.getFinishedLogRecords();
  await provider.shutdown();
  return records;
}

export function exportLogs(exporter: LogRecordExporter, records: ReadableLogRecord[]): Promise<{ code: number; error?: Error }> {
  return new Promise((resolve) => exporter.export(records, resolve));
}

let n = 0;
/** A fresh, valid hex id of `bytes` bytes. */
export function hexId(bytes: 16 | 8): string {
  n++;
  return (Date.now().toString(16) + n.toString(16).padStart(6, '0') + Math.random().toString(16).slice(2)).padEnd(bytes * 2, '7').slice(0, bytes * 2);
}
