// /api/v1/recognition/*: an organization's own profiles (admins add, replace and remove them; members and keys with
// events:read list them), the test endpoint (what a sample would store and which profile read it; stores nothing), and
// the unrecognized report (records no profile read, by source and name, with a sample).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { NewAuditEvent } from '../audit/audit-types.js';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import type { Db } from '../db/db.js';
import type { OrgReadSlots } from '../db/org-read-slots.js';
import { Conflict, Forbidden, InvalidInput, NotFound } from '../shared/domain-errors.js';
import { SECURITY, withErrors } from '../http/route-schemas.js';
import { nextTurn } from '../shared/event-loop-turns.js';
import type { EventsContext, IngestSource } from '../ingest/ingest-source.js';
import { ProfileCompileError, type CompiledProfile } from '../ingest/recognition/compile-profile.js';
import type { Profile } from '../ingest/recognition/profile.js';
import { countProfiles, deleteProfile, listProfiles, lockOrgProfiles, putProfile } from './profiles-repo.js';
import type { Recognition, RecognitionSettings } from './recognition-service.js';
import { profileInput, profileList, profileParams, profileView, testAnswer, testBody, unrecognizedList, unrecognizedQuery } from './recognition-schemas.js';
import { clearUnrecognized, listUnrecognized } from './unrecognized-repo.js';

export interface RecognitionRouteDeps {
  db: Db;
  auth: Authenticator;
  reads: OrgReadSlots;
  recognition: Recognition;
  settings: RecognitionSettings;
  /** The ingest sources, whose own toEvents reads a test sample. */
  sources: readonly IngestSource[];
  /** BODY_LIMIT_BYTES and INGEST_MAX_ENTRIES: what one test sample may hold, as one ingest request. */
  limits: { bodyBytes: number; maxEntries: number };
}

function requireAdmin(auth: Authenticator) {
  return async (request: FastifyRequest) => {
    const ctx = await auth.resolve(request);
    if (!ctx.scopes.includes('org:admin')) throw new Forbidden('managing recognition profiles needs an organization admin login', 'missing_scope');
    request.auth = ctx;
  };
}

function requireReader(auth: Authenticator) {
  return async (request: FastifyRequest) => {
    const ctx = await auth.resolve(request);
    if (!ctx.scopes.some((s) => s === 'org:admin' || s === 'events:read')) throw new Forbidden('missing permission events:read', 'missing_scope');
    request.auth = ctx;
  };
}

type ProfileInput = z.output<typeof profileInput>;

/** Compiles a written profile (version 1 for the test) or answers 400 naming the expression that fails. */
function compileOr400(recognition: Recognition, input: ProfileInput, path: string, maxCost: number): CompiledProfile {
  let compiled: CompiledProfile;
  try {
    compiled = recognition.compile({ ...input, version: 1 });
  } catch (err) {
    if (err instanceof ProfileCompileError) throw new InvalidInput(`profile ${input.id}: ${err.message}`, [{ path: `${path}.${err.path}`, message: err.message }]);
    throw err;
  }
  // A profile that alone may cost more than a record's budget would never be evaluated.
  if (compiled.cost > maxCost) {
    const message = `may cost ${compiled.cost} per record, more than RECOGNITION_MAX_COST_PER_RECORD (${maxCost}): fewer nodes or comprehensions`;
    throw new InvalidInput(`profile ${input.id}: ${message}`, [{ path, message }]);
  }
  return compiled;
}

function viewOf(p: Profile, times?: { createdAt: string; updatedAt: string }) {
  return { id: p.id, version: p.version, description: p.description, source: p.source, fixture: p.fixture, when: p.when, fields: p.fields as Record<string, string>, ...times };
}

/** A test sample as the source's toEvents receives its body, with the route path and content type it would come on. */
function sampleRequest(source: z.output<typeof testBody>['source'], sample: unknown, logGroup: string | undefined): { name: string; body: unknown; path: string; contentType: string } {
  switch (source) {
    case 'line': {
      if (typeof sample !== 'string') throw new InvalidInput('a `line` sample is a string', [{ path: 'sample', message: 'expected a string' }]);
      const body = { messageType: 'DATA_MESSAGE', owner: 'test', logGroup: logGroup ?? 'test', logStream: 'test', subscriptionFilters: [], logEvents: [{ id: '0', timestamp: Date.now(), message: sample }] };
      return { name: 'cloudwatch', body, path: '/cloudwatch', contentType: 'application/json' };
    }
    case 'otlp-traces':
    case 'otlp-logs':
      return { name: 'otlp', body: Buffer.from(typeof sample === 'string' ? sample : JSON.stringify(sample ?? null)), path: source === 'otlp-traces' ? '/v1/traces' : '/v1/logs', contentType: 'application/json' };
    case 'raw':
      return { name: 'raw', body: sample, path: '/events', contentType: typeof sample === 'string' ? 'application/x-ndjson' : 'application/json' };
    default:
      return { name: source, body: sample, path: `/${source}`, contentType: 'application/json' };
  }
}

function answerEvent(e: NewAuditEvent) {
  const metadata = e.metadata ?? {};
  const rec = metadata.recognition as { profile: string; version: number } | undefined;
  return {
    type: e.type,
    source: e.source,
    occurredAt: e.occurredAt.toISOString(),
    serverId: e.serverId ?? null,
    sessionId: e.sessionId ?? null,
    toolName: e.toolName ?? null,
    action: e.action ?? null,
    latencyMs: e.latencyMs ?? null,
    metadata,
    profile: rec ? { id: rec.profile, version: rec.version } : null,
  };
}

export function registerRecognitionRoutes(fastify: FastifyInstance, deps: RecognitionRouteDeps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const admin = requireAdmin(deps.auth);
  const reader = requireReader(deps.auth);
  const security = SECURITY.reader;
  const { settings } = deps;

  app.get('/api/v1/recognition/profiles', { onRequest: reader, schema: { summary: "The organization's own recognition profiles (in the order tried) and the built-in ones", security, response: withErrors({ 200: profileList }) } }, async (request) => {
    const stored = await listProfiles(deps.db, authOf(request).orgId, settings.maxProfilesPerOrg);
    return {
      items: stored.map((s) => viewOf(s.profile, s)),
      builtin: deps.recognition.builtin.map((c) => viewOf(c.profile)),
      limits: { maxProfiles: settings.maxProfilesPerOrg, maxExpressionChars: settings.maxExpressionChars, maxExpressionNodes: settings.maxExpressionNodes, maxCostPerRecord: settings.maxCostPerRecord },
    };
  });

  app.post(
    '/api/v1/recognition/profiles',
    { onRequest: admin, bodyLimit: 1024 * 1024, schema: { summary: 'Add a recognition profile (201), or replace the one with its id (200, next version; its place in the order kept)', security, body: profileInput, response: withErrors({ 200: profileView, 201: profileView }) } },
    async (request, reply) => {
      const orgId = authOf(request).orgId;
      const input = request.body;
      compileOr400(deps.recognition, input, '(body)', settings.maxCostPerRecord);
      const { stored, created } = await deps.db.transaction(async (tx) => {
        await lockOrgProfiles(tx, orgId);
        const existing = await listProfiles(tx, orgId, settings.maxProfilesPerOrg + 1);
        if (!existing.some((s) => s.profile.id === input.id) && (await countProfiles(tx, orgId)) >= settings.maxProfilesPerOrg) {
          throw new Conflict(`this organization has ${settings.maxProfilesPerOrg} profiles (RECOGNITION_MAX_PROFILES_PER_ORG); remove one first`);
        }
        return putProfile(tx, orgId, { id: input.id, description: input.description, source: input.source, when: input.when, fields: input.fields });
      });
      await deps.recognition.changed(orgId);
      return reply.code(created ? 201 : 200).send(viewOf(stored.profile, stored));
    },
  );

  app.delete('/api/v1/recognition/profiles/:profileId', { onRequest: admin, schema: { summary: 'Remove a recognition profile', security, params: profileParams, response: withErrors({ 204: z.undefined() }) } }, async (request, reply) => {
    const orgId = authOf(request).orgId;
    const gone = await deps.db.transaction(async (tx) => {
      await lockOrgProfiles(tx, orgId);
      return deleteProfile(tx, orgId, request.params.profileId.slice(0, 100));
    });
    if (!gone) throw new NotFound('profile not found');
    await deps.recognition.changed(orgId);
    return reply.code(204).send();
  });

  app.post(
    '/api/v1/recognition/test',
    {
      onRequest: reader,
      bodyLimit: deps.limits.bodyBytes,
      schema: { summary: 'What a sample (a log line, a source body, an OTLP/JSON export) would store and which profile read each record; stores nothing', security, body: testBody, response: withErrors({ 200: testAnswer }) },
    },
    async (request) => {
      const orgId = authOf(request).orgId;
      const b = request.body;
      const inputs = b.profiles ?? [];
      // Counted before any is compiled; each compiled in its own turn of the event loop (a profile's expressions take
      // milliseconds to parse: a whole test's would hold every other request up).
      if (inputs.length > settings.maxProfilesPerOrg) throw new InvalidInput(`more than ${settings.maxProfilesPerOrg} draft profiles (RECOGNITION_MAX_PROFILES_PER_ORG)`);
      const drafts: CompiledProfile[] = [];
      for (const [i, p] of inputs.entries()) {
        if (i > 0) await nextTurn();
        drafts.push(compileOr400(deps.recognition, p, `profiles.${i}`, settings.maxCostPerRecord));
      }
      const stored = b.useStored ? await deps.recognition.orgProfiles(orgId) : [];
      const recognizer = deps.recognition.recognizerWith([...drafts, ...stored]);
      const req = sampleRequest(b.source, b.sample, b.logGroup);
      const source = deps.sources.find((s) => s.name === req.name);
      if (!source) throw new InvalidInput(`no ingest source ${req.name}`);
      const ctx: EventsContext = { idempotencyKey: null, receivedAt: new Date(), contentType: req.contentType, path: req.path, headers: {}, limits: deps.limits, recognizer };
      const mapped = await source.toEvents(req.body, ctx);
      return { events: mapped.events.map(answerEvent), notStored: mapped.notStored ?? 0, empty: mapped.empty ?? 0, failures: recognizer.failures(), unrecognized: recognizer.tallies() };
    },
  );

  app.get('/api/v1/recognition/unrecognized', { onRequest: reader, schema: { summary: 'Records no profile read (and not stored as tool calls), by source and name, most counted first, each with a sample', security, querystring: unrecognizedQuery, response: withErrors({ 200: unrecognizedList }) } }, async (request) => {
    const orgId = authOf(request).orgId;
    const items = await deps.reads.run(orgId, () => listUnrecognized(deps.db, orgId, { source: request.query.source, limit: request.query.limit }));
    return { items };
  });

  app.delete('/api/v1/recognition/unrecognized', { onRequest: admin, schema: { summary: 'Clear the unrecognized report', security, response: withErrors({ 204: z.undefined() }) } }, async (request, reply) => {
    await clearUnrecognized(deps.db, authOf(request).orgId);
    return reply.code(204).send();
  });
}
