// The contract of an ingest source: where it listens, what it accepts, a pure mapping of a body to audit events, and
// optional hooks for sources whose senders expect their own answers. The ingest plugin does everything else.
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { ZodType } from 'zod';
import type { NewAuditEvent } from '../audit/audit-types.js';
import type { AuditSource } from '../contract/event-sources.js';
import type { ErrorBody } from '../http/error-handler.js';
import type { Recognizer } from './recognition/recognizer.js';

/**
 * How a body of one content type reaches `toEvents` (after Content-Encoding decoding and the body limit):
 * - `json`: Fastify's JSON parser (numbers are JS numbers);
 * - `exact-json`: JSON whose integers beyond 2^53 stay exact digit strings, gzip bodies sent without Content-Encoding
 *   inflated (bounded by the body limit), at most 64 levels deep;
 * - `text`: the body as a UTF-8 string;
 * - `form`: `application/x-www-form-urlencoded` fields as an object;
 * - `bytes`: the body as a Buffer.
 */
export type BodyKind = 'json' | 'exact-json' | 'text' | 'form' | 'bytes';

/** What `toEvents` knows about the request besides its body. */
export interface EventsContext {
  /** The request's Idempotency-Key (sources with `idempotency`), else null. */
  idempotencyKey: string | null;
  receivedAt: Date;
  /** The media type the body came with: lower case, without parameters (one of the source's `accepts`). */
  contentType: string;
  /** The route path within the source, e.g. `/events` or `/v1/traces`. */
  path: string;
  headers: Readonly<IncomingHttpHeaders>;
  /** BODY_LIMIT_BYTES (also the bound of anything decompressed from the body) and INGEST_MAX_ENTRIES. */
  limits: { bodyBytes: number; maxEntries: number };
  /** The organization's profiles then the built-in ones, for this request (src/ingest/recognition/); none in pure uses. */
  recognizer?: Recognizer;
}

/** What a body maps to. */
export interface SourceEvents {
  /**
   * The audit events to store, in order; each carries its dedupe key (see dedupe-key.ts). An event may name the part of
   * its metadata its batch shares (`sharedMetadata`: the same object, and the same values, for every event of the
   * batch, e.g. a log group and stream, or a resource's attributes); the event log then stores that part once per
   * organization, by one rule for every source: top-level keys, and an object's keys one level down.
   */
  events: NewAuditEvent[];
  /** Entries accepted but deliberately not stored for the source's own reason (e.g. OTLP spans that are not tool calls); counted in metrics. */
  notStored?: number;
  /** Entries that carry nothing (isEmptyEntry, the one rule for every source): not stored, counted as `empty`. */
  empty?: number;
  /**
   * Store in transactions of at most INGEST_MAX_ENTRIES each, for sources whose every dedupe key is deterministic (a
   * retry of a half-stored request stores only the rest). Default: one transaction, more entries than allowed is a 413.
   */
  chunked?: boolean;
  /** Anything the source's `answer` hook needs (e.g. the request id to echo). */
  info?: unknown;
}

/** The outcome of a stored request, handed to `answer`. */
export interface IngestResult {
  accepted: number;
  duplicates: number;
  notStored: number;
  empty: number;
  /** What toEvents returned as `info`. */
  info?: unknown;
}

/** An answer a hook chooses: body, and optionally its status (default 200 or the error's), content type and headers. */
export interface SourceAnswer {
  body: unknown;
  statusCode?: number;
  contentType?: string;
  headers?: Record<string, string>;
}

/** A failed request as the one error handler would answer it. */
export interface ErrorAnswer {
  statusCode: number;
  body: ErrorBody;
  /** Seconds, for 429 and 503 (the plugin sets the Retry-After header). */
  retryAfter?: number;
}

export interface ReplyContext {
  request: FastifyRequest;
  /** As in EventsContext; '' when the request failed before its type was checked. */
  contentType: string;
}

export interface IngestSource {
  /** The `source` of its events and the metrics label. */
  name: AuditSource;
  /** A path prefix under /api/v1/ingest shared by the source's paths, e.g. `/otlp`; default none. */
  prefix?: string;
  /** Route paths (after the prefix), each answering POST. */
  paths: readonly string[];
  /** Accepted media types and how each body is read; any other Content-Type (or none) is a 415 naming these. */
  accepts: Readonly<Record<string, BodyKind>>;
  /**
   * The sender's own header carrying the API key as is (lower case, e.g. an access-key header its protocol defines);
   * default `Authorization: Bearer`. Declared in /openapi.json as an apiKey scheme named after the header.
   */
  keyHeader?: string;
  /** Runs before authentication (e.g. to explain which header the sender must use). */
  beforeAuth?: (request: FastifyRequest) => Promise<void>;
  /**
   * Whether the `Idempotency-Key` header is honoured, and the name its claim is recorded under (a retry with the same
   * key and body answers the first counts). False for sources whose senders give every entry an identity.
   */
  idempotency: { claim: string } | false;
  /** One line for /openapi.json: what the routes take and how entries are deduplicated. */
  summary: string;
  /** The success answer's schema for /openapi.json; default `{accepted, duplicates}`. */
  answerSchema?: ZodType;
  /** The failure answer's schema for /openapi.json when `formatError` gives the sender's own shape. */
  errorSchema?: ZodType;
  /** The usual body for /openapi.json: the zod schema toEvents validates it with (bodies arrive in the source's own encodings). */
  documentedBody?: ZodType;
  /**
   * Pure: the events of one body. Throws domain errors (InvalidInput, TooLarge) for bodies that cannot be stored;
   * nothing of such a request is stored.
   */
  toEvents(body: unknown, ctx: EventsContext): SourceEvents | Promise<SourceEvents>;
  /** The success answer; default `200 {accepted, duplicates}`. */
  answer?(result: IngestResult, ctx: ReplyContext): SourceAnswer | Promise<SourceAnswer>;
  /** The failure answer in the sender's own shape; default the one error shape. Status and Retry-After are preset. */
  formatError?(error: ErrorAnswer, ctx: ReplyContext): SourceAnswer | Promise<SourceAnswer>;
  /** The metrics outcome label of `notStored` entries; default `not_stored`. */
  notStoredOutcome?: string;
}
