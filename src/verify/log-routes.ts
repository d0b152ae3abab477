// The verifiable log's API (scope events:read): checkpoints, inclusion and consistency proofs, verifier keys, and the
// C2SP tlog-tiles layout under /api/v1/log (`checkpoint`, `tile/<L>/<N>[.p/<W>]`).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import type { Db } from '../db/db.js';
import type { OrgReadSlots } from '../db/org-read-slots.js';
import { SECURITY, withErrors } from '../http/route-schemas.js';
import { NotFound } from '../shared/domain-errors.js';
import { originOf } from './checkpoint.js';
import { checkpointAtLeast, latestCheckpoint, readTiles, tileKey, verifierKeys, type StoredCheckpoint } from './merkle-sql.js';
import { proveConsistency, proveInclusion } from './log-proofs.js';
import { parseVerifierKey, type NoteVerifier } from './signed-note.js';
import { parseTilePath, TILE_WIDTH } from './tiles.js';
import { HASH_SIZE } from './tree.js';

export const LOG_PREFIX = '/api/v1/log';

const size = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const seq = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

const checkpointSchema = z.object({
  origin: z.string(),
  size: z.number().int(),
  rootHash: z.string().describe('base64'),
  note: z.string().describe('the C2SP signed note (tlog-checkpoint body)'),
  issuedAt: z.string(),
});
const mismatch = 'A proof is checked before it is served: 409 log_mismatch (with firstBadSeq when known) when the stored event or hashes differ from what was appended or signed.';

export interface LogRouteDeps {
  db: Db;
  auth: Authenticator;
  reads: OrgReadSlots;
  publicHost: string;
  /** The current verifier key (null when no signing key is configured). */
  currentKey: string | null;
}

export function registerLogRoutes(fastify: FastifyInstance, deps: LogRouteDeps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const reader = { onRequest: deps.auth.require({ scope: 'events:read' }) };
  const verifiers = async (): Promise<NoteVerifier[]> => (await verifierKeys(deps.db)).map((k) => parseVerifierKey(k.verifierKey));
  const show = (orgId: string, c: StoredCheckpoint) => ({ origin: originOf(deps.publicHost, orgId), size: c.size, rootHash: c.root.toString('base64'), note: c.note, issuedAt: c.issuedAt.toISOString() });
  const latestOrNotFound = async (orgId: string) => {
    const c = await deps.reads.run(orgId, () => latestCheckpoint(deps.db, orgId));
    if (!c) throw new NotFound('no checkpoint has been issued for this organization yet');
    return c;
  };

  app.get(`${LOG_PREFIX}/checkpoint`, {
    ...reader,
    schema: {
      summary: 'The latest signed checkpoint (C2SP tlog-checkpoint in a signed note), as tlog-tiles clients read it',
      security: SECURITY.reader,
      response: withErrors({ 200: { description: 'the signed note', content: { 'text/plain; charset=utf-8': { schema: z.string() } } } }),
    },
  }, async (request, reply) => {
    const c = await latestOrNotFound(authOf(request).orgId);
    reply.type('text/plain; charset=utf-8').header('cache-control', 'no-store');
    return c.note;
  });

  app.get(`${LOG_PREFIX}/checkpoints/latest`, {
    ...reader,
    schema: { summary: 'The latest signed checkpoint, with its size and root hash', security: SECURITY.reader, response: withErrors({ 200: checkpointSchema }) },
  }, async (request) => {
    const orgId = authOf(request).orgId;
    return show(orgId, await latestOrNotFound(orgId));
  });

  app.get(`${LOG_PREFIX}/checkpoints`, {
    ...reader,
    schema: {
      summary: 'The first signed checkpoint of at least `size` leaves (404 when none has been issued yet)',
      security: SECURITY.reader,
      querystring: z.strictObject({ size }),
      response: withErrors({ 200: checkpointSchema }),
    },
  }, async (request) => {
    const orgId = authOf(request).orgId;
    const c = await deps.reads.run(orgId, () => checkpointAtLeast(deps.db, orgId, request.query.size));
    if (!c) throw new NotFound(`no checkpoint of at least ${request.query.size} leaves has been issued yet`);
    return show(orgId, c);
  });

  app.get(`${LOG_PREFIX}/proof/inclusion`, {
    ...reader,
    schema: {
      summary: 'An RFC 9162 inclusion proof of the event `seq` (leaf seq - 1) in the tree of `size` leaves (default: the latest checkpoint\'s)',
      description: mismatch,
      security: SECURITY.reader,
      querystring: z.strictObject({ seq, size: size.optional() }),
      response: withErrors({
        200: z.object({
          seq: z.number().int(),
          leafIndex: z.number().int(),
          treeSize: z.number().int(),
          leafHash: z.string(),
          rootHash: z.string(),
          proof: z.array(z.string()),
          checkpoint: z.string().nullable(),
          eventStored: z.boolean(),
        }),
      }),
    },
  }, async (request) => {
    const orgId = authOf(request).orgId;
    const treeSize = request.query.size ?? (await latestOrNotFound(orgId)).size;
    const keys = await verifiers();
    return deps.reads.run(orgId, () => proveInclusion(deps.db, orgId, request.query.seq, treeSize, keys));
  });

  app.get(`${LOG_PREFIX}/proof/consistency`, {
    ...reader,
    schema: {
      summary: 'An RFC 9162 consistency proof from the tree of `from` leaves to that of `to` leaves (default: the latest checkpoint\'s)',
      description: mismatch,
      security: SECURITY.reader,
      querystring: z.strictObject({ from: seq, to: size.optional() }),
      response: withErrors({
        200: z.object({
          from: z.number().int(),
          to: z.number().int(),
          fromRoot: z.string(),
          toRoot: z.string(),
          proof: z.array(z.string()),
          fromCheckpoint: z.string().nullable(),
          toCheckpoint: z.string().nullable(),
        }),
      }),
    },
  }, async (request) => {
    const orgId = authOf(request).orgId;
    const to = request.query.to ?? (await latestOrNotFound(orgId)).size;
    const keys = await verifiers();
    return deps.reads.run(orgId, () => proveConsistency(deps.db, orgId, request.query.from, to, keys));
  });

  app.get(`${LOG_PREFIX}/keys`, {
    ...reader,
    schema: {
      summary: 'The verifier keys of the log\'s checkpoints (name+hexid+base64key): the current one and every one used before',
      security: SECURITY.reader,
      response: withErrors({ 200: z.object({ current: z.string().nullable(), keys: z.array(z.object({ verifierKey: z.string(), firstUsedAt: z.string() })) }) }),
    },
  }, async () => ({
    current: deps.currentKey,
    keys: (await verifierKeys(deps.db)).map((k) => ({ verifierKey: k.verifierKey, firstUsedAt: k.firstUsedAt.toISOString() })),
  }));

  // A tile path has 2 to 7 segments after tile/ (<L>, the index in up to 5 groups, and .p/<W>): one route per count,
  // each of plain segments, so OpenAPI can describe them; the handler reads the joined path.
  const tileSchema = (params: string[]) => ({
    summary: 'A C2SP tlog-tiles hash tile: tile/<L>/<N> (full: 256 hashes) or tile/<L>/<N>.p/<W> (its first W hashes), N in x-prefixed three-digit groups; entry bundles are not served',
    security: SECURITY.reader,
    params: z.object(Object.fromEntries(params.map((p) => [p, z.string().max(8)]))),
    response: withErrors({ 200: { description: 'the concatenated 32-byte hashes', content: { 'application/octet-stream': { schema: z.string() } } } }),
  });
  for (let segments = 2; segments <= 7; segments++) {
    const names = ['level', ...Array.from({ length: segments - 1 }, (_, i) => `s${i + 1}`)];
    app.get(`${LOG_PREFIX}/tile/${names.map((n) => `:${n}`).join('/')}`, { ...reader, schema: tileSchema(names) }, async (request, reply) => {
      const orgId = authOf(request).orgId;
      const params = request.params as Record<string, string>;
      const parsed = parseTilePath(names.map((n) => params[n]).join('/'));
      if (!parsed) throw new NotFound('not a tile path: tile/<L>/<N>[.p/<W>] (entry bundles are not served; read events with the export)');
      const data = (await deps.reads.run(orgId, () => readTiles(deps.db, orgId, [parsed.tile]))).get(tileKey(parsed.tile));
      const bytes = parsed.width * HASH_SIZE;
      if (!data || data.length < bytes) throw new NotFound('the log holds no such tile (yet, or any more: retention removed it)');
      reply.type('application/octet-stream');
      // A full tile never changes; a partial one is a prefix of what the tile becomes.
      reply.header('cache-control', parsed.width === TILE_WIDTH ? 'private, max-age=31536000, immutable' : 'private, max-age=60');
      // The declared schema is a string (OpenAPI); the bytes are sent as they are.
      return reply.send(data.subarray(0, bytes) as unknown as string);
    });
  }
}
