// Source `firehose` (POST /api/v1/ingest/firehose): the Amazon Data Firehose HTTP endpoint delivery protocol, answered
// in Firehose's own shape.
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { NewAuditEvent } from '../../audit/audit-types.js';
import { InvalidInput, TooLarge } from '../../shared/domain-errors.js';
import { zodIssues } from '../../shared/zod-issues.js';
import type { EventsContext, IngestSource, SourceEvents } from '../ingest-source.js';
import { parseTimestamp } from '../normalize/index.js';
import { firehoseRecordEvents, type FirehoseRecordContext } from './firehose-records.js';
import { ACCESS_KEY_HEADER, commonAttributesOf, headerRequestId, peekBodyRequestId, requireAccessKeyHeader, sourceArnOf } from './firehose-request.js';
import { firehoseRequestSchema } from './firehose-schemas.js';

/** All records of one request may decompress to at most this many times the body limit; later records are stored raw. */
export const FIREHOSE_DECODED_FACTOR = 8;

interface DeliveryInfo {
  requestId: string;
  records: number;
  /** Records with no data: stored nothing. */
  emptyRecords: number;
}

/** The request id to echo: the body's, else the header's, else ''. */
function requestIdOf(request: FastifyRequest): string {
  const body = request.body as { requestId?: unknown } | undefined;
  if (body && typeof body === 'object' && typeof body.requestId === 'string' && body.requestId.trim()) return body.requestId.trim().slice(0, 200);
  return headerRequestId(request.headers) ?? '';
}

/** TooLarge before any record is decoded when the request lists more records than allowed. */
function checkRecordCount(body: unknown, maxRecords: number): void {
  const records = (body as { records?: unknown } | null)?.records;
  if (Array.isArray(records) && records.length > maxRecords) {
    throw new TooLarge(`${records.length} records in one request; the limit is ${maxRecords} (FIREHOSE_MAX_RECORDS): lower the stream's buffer size`);
  }
}

/**
 * The events of one delivery request: each record decoded on its own (a bad record is stored raw, never rejects the
 * request); records with no data and blank log events are counted (`empty`), not stored. Every key is deterministic,
 * so storing is chunked.
 */
export async function firehoseEvents(body: unknown, ctx: EventsContext, maxRecords: number): Promise<SourceEvents & { info: DeliveryInfo }> {
  checkRecordCount(body, maxRecords);
  const parsed = firehoseRequestSchema.safeParse(body);
  if (!parsed.success) throw new InvalidInput('body is not a Firehose delivery request {requestId, timestamp, records[{data}]}', zodIssues(parsed.error));
  const requestId = parsed.data.requestId ?? headerRequestId(ctx.headers);
  if (!requestId) throw new InvalidInput('requestId is missing from the body and the X-Amz-Firehose-Request-Id header', [{ path: 'requestId', message: 'required' }]);
  const sourceArn = sourceArnOf(ctx.headers);
  const attributes = commonAttributesOf(ctx.headers);
  const records: FirehoseRecordContext = {
    requestId,
    receivedAt: ctx.receivedAt,
    sentAt: parseTimestamp(parsed.data.timestamp),
    sourceArn,
    recordLimit: ctx.limits.bodyBytes,
    budget: { remaining: ctx.limits.bodyBytes * FIREHOSE_DECODED_FACTOR },
    recognizer: ctx.recognizer,
    firehose: {
      requestId,
      timestamp: parsed.data.timestamp,
      sourceArn: sourceArn ?? undefined,
      commonAttributes: attributes.attributes,
      commonAttributesOmitted: attributes.omitted,
    },
  };
  const events: NewAuditEvent[] = [];
  let emptyRecords = 0;
  let emptyEntries = 0;
  for (let i = 0; i < parsed.data.records.length; i++) {
    const outcome = await firehoseRecordEvents(parsed.data.records[i], i, records);
    if (outcome.empty) emptyRecords++;
    emptyEntries += outcome.emptyEntries;
    for (const e of outcome.events) events.push(e);
  }
  return { events, empty: emptyRecords + emptyEntries, chunked: true, info: { requestId, records: parsed.data.records.length, emptyRecords } };
}

/** `maxRecords`: FIREHOSE_MAX_RECORDS. */
export function firehoseSource(settings: { maxRecords: number }): IngestSource {
  return {
    name: 'firehose',
    paths: ['/firehose'],
    summary: "Amazon Data Firehose HTTP endpoint delivery (at most FIREHOSE_MAX_RECORDS records; empty records store nothing); answers and errors in Firehose's shape",
    answerSchema: z.object({ requestId: z.string(), timestamp: z.number().int() }),
    errorSchema: z.object({ requestId: z.string(), timestamp: z.number().int(), errorMessage: z.string() }),
    accepts: { 'application/json': 'exact-json' },
    documentedBody: firehoseRequestSchema,
    keyHeader: ACCESS_KEY_HEADER,
    beforeAuth: requireAccessKeyHeader,
    // Firehose gives every record an identity (request id + record index): retries are safe without Idempotency-Key.
    idempotency: false,
    toEvents: (body, ctx) => firehoseEvents(body, ctx, settings.maxRecords),
    answer(result, { request }) {
      const { requestId, records, emptyRecords } = result.info as DeliveryInfo;
      request.log.info({ requestId, records, emptyRecords, emptyEntries: result.empty, accepted: result.accepted, duplicates: result.duplicates }, 'firehose delivery stored');
      return { body: { requestId, timestamp: Date.now() } };
    },
    /**
     * Every failure answers `{requestId, timestamp, errorMessage}`. A request refused before its body was read (bad
     * key, wrong content type) and sent without X-Amz-Firehose-Request-Id still echoes the requestId of its body, read
     * from the body's first bytes.
     */
    async formatError({ body }, { request }) {
      const issues = body.issues?.length ? ` (${body.issues.map((i) => `${i.path}: ${i.message}`).join('; ')})` : '';
      const requestId = requestIdOf(request) || ((await peekBodyRequestId(request)) ?? '');
      return { body: { requestId, timestamp: Date.now(), errorMessage: `${body.message}${issues}`.slice(0, 8192) } };
    },
  };
}
