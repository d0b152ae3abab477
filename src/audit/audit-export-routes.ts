// GET /api/v1/audit-events/export: a time range of the organization's events as NDJSON (gzip when asked), streamed.
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import negotiate from '@fastify/accept-negotiator';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import type { ReadReplica } from '../db/read-replica.js';
import type { OrgReadSlots } from '../db/org-read-slots.js';
import { SECURITY, withErrors } from '../http/route-schemas.js';
import { RateLimited } from '../shared/domain-errors.js';
import { auditQuerySchema, eventFilterFields } from './audit-routes.js';
import { checkFreeText } from './event-filters.js';
import { exportNdjson, type ExportProgress } from './audit-export.js';

/** An unknown parameter (e.g. `from[]=`) is a 400 naming it (src/http/schema-compilers.ts), never ignored (the whole range would be exported). */
export const exportQuerySchema = z
  .object({
    ...eventFilterFields,
    /** Resume: only events with a greater seq (the seq of the last line a previous, interrupted export delivered). */
    cursor: auditQuerySchema.shape.cursor,
  })
  .refine((q) => !q.from || !q.to || q.from < q.to, { message: 'from must be before to', path: ['to'] });

const schema = {
  summary: 'A time range of stored audit events, optionally filtered as the listing, as NDJSON in seq order (gzip when accepted), streamed',
  security: SECURITY.reader,
  querystring: exportQuerySchema,
  response: withErrors({
    200: {
      description: 'one event per line, the fields of GET /api/v1/audit-events items; complete when the chunked body ends normally',
      content: { 'application/x-ndjson': { schema: z.string() } },
    },
  }),
};

export interface ExportRouteDeps {
  /**
   * Exports read the replica while it is within its lag bound; an export stays on the database it started on, so it
   * holds exactly the events committed there when it started.
   */
  replica: ReadReplica;
  auth: Authenticator;
  /** Most events one page (one query) of an export holds: EXPORT_PAGE_ROWS. */
  pageRows: number;
  /** Most bytes of one page's events (READ_PAGE_MAX_BYTES); a larger event is a page by itself. */
  pageMaxBytes: number;
  /** The organization's read slots: an export starts only when its queue has room, and each page is read in a slot. */
  reads: OrgReadSlots;
  /** A page ended early by its byte budget. */
  onPageCut?: () => void;
  /** Exports of one organization in progress at once on this instance: EXPORT_MAX_PER_ORG. */
  maxPerOrg: number;
  /** An export whose client takes no bytes for this long is ended: EXPORT_IDLE_TIMEOUT_MS. */
  idleTimeoutMs: number;
  /** Free text searches at most this many hours (SEARCH_MAX_RANGE_HOURS). */
  searchMaxRangeHours: number;
}

/**
 * Ends the response when its socket has taken no bytes for `idleMs` while the response waits for the client to drain
 * it (a client that stopped reading would otherwise keep its export, and its place under EXPORT_MAX_PER_ORG, until it
 * hangs up). A slow page read is not the client's stall and does not count. Returns the stop function.
 */
function endWhenIdle(reply: FastifyReply, idleMs: number, onIdle: () => void): () => void {
  let written = -1;
  let since = Date.now();
  const timer = setInterval(() => {
    const now = reply.raw.socket?.bytesWritten ?? 0;
    if (now !== written || !reply.raw.writableNeedDrain) {
      written = now;
      since = Date.now();
    } else if (Date.now() - since >= idleMs) {
      clearInterval(timer);
      onIdle();
      reply.raw.destroy();
    }
  }, Math.max(50, Math.min(1000, Math.floor(idleMs / 4))));
  timer.unref();
  return () => clearInterval(timer);
}

/** Bytes of text buffered ahead of the socket before the next page is read. */
const BUFFER_BYTES = 64 * 1024;

export function registerAuditExportRoutes(fastify: FastifyInstance, deps: ExportRouteDeps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  // Exports in progress end when the instance shuts down (the client resumes with `cursor` elsewhere), so a long
  // export never holds up a shutdown.
  const running = new Set<Readable>();
  const perOrg = new Map<string, number>();
  app.addHook('preClose', async () => {
    for (const s of running) s.destroy();
  });

  app.get('/api/v1/audit-events/export', { onRequest: deps.auth.require({ scope: 'events:read' }), schema }, async (request, reply) => {
    const q = request.query;
    checkFreeText(q, deps.searchMaxRangeHours);
    const orgId = authOf(request).orgId;
    const inProgress = perOrg.get(orgId) ?? 0;
    if (inProgress >= deps.maxPerOrg) {
      throw new RateLimited(`${inProgress} exports of this organization are in progress (EXPORT_MAX_PER_ORG); retry when one has ended`, 5);
    }
    // Admitted only while the organization's read queue has room (else 429); once admitted, its pages wait their turn.
    deps.reads.admit(orgId);
    perOrg.set(orgId, inProgress + 1);
    const abort = new AbortController();
    const progress: ExportProgress = { rows: 0, lastSeq: 0 };
    const { cursor, ...filter } = q;
    const range = { ...filter, afterSeq: cursor === undefined ? undefined : Number(cursor) };
    const pages = {
      rows: deps.pageRows,
      bytes: deps.pageMaxBytes,
      onCut: deps.onPageCut,
      turn: <T>(read: () => Promise<T>) => deps.reads.run(orgId, read, { continues: true }),
    };
    // objectMode off: the stream buffers BUFFER_BYTES of text and pulls the next page only when it drops below that.
    const source = Readable.from(exportNdjson(deps.replica.pick(), orgId, range, pages, abort.signal, progress), { objectMode: false, highWaterMark: BUFFER_BYTES });
    running.add(source);
    let finished = false;
    source.once('end', () => {
      finished = true;
    });
    const stopIdleCheck = endWhenIdle(reply as unknown as FastifyReply, deps.idleTimeoutMs, () =>
      request.log.info({ orgId, rows: progress.rows, idleMs: deps.idleTimeoutMs }, 'export ended: its client took nothing for EXPORT_IDLE_TIMEOUT_MS'),
    );
    reply.raw.once('close', () => {
      stopIdleCheck();
      abort.abort();
      running.delete(source);
      const left = (perOrg.get(orgId) ?? 1) - 1;
      if (left > 0) perOrg.set(orgId, left);
      else perOrg.delete(orgId);
      if (!source.destroyed) source.destroy();
      request.log.info({ orgId, rows: progress.rows, lastSeq: progress.lastSeq, complete: finished && reply.raw.writableFinished }, 'export ended');
    });
    // The answer is a stream (the 200 schema documents its text), which the typed reply does not take.
    const streamReply = reply as unknown as FastifyReply;
    const gzip = negotiate(request.headers['accept-encoding'] ?? '', ['gzip', 'identity']) === 'gzip';
    streamReply
      .header('content-type', 'application/x-ndjson; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('vary', 'Accept-Encoding');
    if (!gzip) return streamReply.send(source);
    const zipped = createGzip();
    source.once('error', (err) => zipped.destroy(err));
    zipped.once('close', () => source.destroy());
    return streamReply.header('content-encoding', 'gzip').send(source.pipe(zipped));
  });
}
