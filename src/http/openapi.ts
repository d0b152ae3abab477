// GET /openapi.json: the OpenAPI 3.1 description of the API, with bodies generated from the zod schemas.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { auditQuerySchema } from '../audit/audit-routes.js';
import { statsQuerySchema } from '../audit/audit-stats-routes.js';
import { activeOrgBody, createKeyBody, createOrgBody, createUserBody, loginBody } from '../auth/auth-schemas.js';
import { rawEventSchema } from '../ingest/raw/raw-schemas.js';

type Op = {
  summary: string;
  security?: ('apiKey' | 'cookie' | 'admin' | 'firehoseKey')[];
  body?: z.ZodType;
  query?: z.ZodObject;
  responses?: Record<string, string>;
  extraBodies?: Record<string, unknown>;
};

const schema = (s: z.ZodType) => z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' });

const ops: Record<string, Record<string, Op>> = {
  '/api/v1/events': {
    get: {
      summary: 'Server-sent event stream of the organization (tool_call, anomaly, session_update); replay with Last-Event-ID or lastEventId',
      security: ['cookie', 'apiKey'],
      responses: { '200': 'text/event-stream', '401': 'no or bad credentials', '403': 'missing events:read', '429': 'connection limit' },
    },
  },
  '/api/v1/ingest/events': {
    post: {
      summary: 'Raw JSON audit events: one object, an array, or NDJSON. Deduplicated by `id`, or by the Idempotency-Key header + position (a retry answers the same counts; 422 when the key was used for another request)',
      security: ['apiKey'],
      body: z.union([rawEventSchema, z.array(rawEventSchema)]),
    },
  },
  '/api/v1/ingest/cloudwatch': { post: { summary: 'CloudWatch Logs entries (spec body, subscription payload, awslogs envelope, gzip); optional Idempotency-Key header', security: ['apiKey'] } },
  '/api/v1/ingest/firehose': { post: { summary: 'Amazon Data Firehose HTTP endpoint delivery (at most FIREHOSE_MAX_RECORDS records; empty records store nothing)', security: ['firehoseKey'] } },
  '/api/v1/ingest/datadog': { post: { summary: 'Datadog webhook (JSON or form encoded); optional Idempotency-Key header', security: ['apiKey'] } },
  '/api/v1/audit-events': { get: { summary: 'Stored audit events, filtered, cursor paging by seq', security: ['cookie', 'apiKey'], query: auditQuerySchema } },
  '/api/v1/audit-events/stats': {
    get: {
      summary:
        'Figures of a fixed window (1h: 60 one-minute buckets; 24h: 96 fifteen-minute buckets): tool calls by action and bucket, sessions seen, the latest 50 anomalies, and asOfSeq (the last seq they include)',
      security: ['cookie', 'apiKey'],
      query: statsQuerySchema,
      responses: { '200': 'the figures', '400': 'unknown window', '503': 'the figures took longer than STATS_QUERY_TIMEOUT_MS' },
    },
  },
  '/api/v1/sessions': { get: { summary: 'Agent sessions', security: ['cookie', 'apiKey'] } },
  '/api/v1/sessions/{id}': { get: { summary: 'One agent session', security: ['cookie', 'apiKey'] } },
  '/api/v1/sessions/{id}/suspend': { post: { summary: 'Suspend a session (409 when already suspended)', security: ['cookie', 'apiKey'] } },
  '/api/v1/sessions/{id}/resume': { post: { summary: 'Resume a session (409 when not suspended)', security: ['cookie', 'apiKey'] } },
  '/api/v1/anomaly-settings': {
    get: { summary: 'Rate-spike detection settings of the organization', security: ['cookie', 'apiKey'] },
    put: { summary: 'Change rate-spike detection settings (org admin login, or a key with sessions:write)', security: ['cookie', 'apiKey'] },
  },
  '/api/v1/auth/login': { post: { summary: 'Sign in; sets the session cookie', body: loginBody } },
  '/api/v1/auth/logout': { post: { summary: 'Sign out', security: ['cookie'] } },
  '/api/v1/auth/me': { get: { summary: 'The signed-in user, organizations and active organization', security: ['cookie', 'apiKey'] } },
  '/api/v1/auth/active-organization': { put: { summary: 'Switch the active organization', security: ['cookie'], body: activeOrgBody } },
  '/api/v1/api-keys': {
    get: { summary: "List the organization's API keys (org admins)", security: ['cookie'] },
    post: { summary: 'Create an API key; the key is returned once', security: ['cookie'], body: createKeyBody },
  },
  '/api/v1/api-keys/{id}': { delete: { summary: 'Revoke an API key', security: ['cookie'] } },
  '/api/v1/admin/organizations': {
    get: { summary: 'List organizations, oldest first, at most 1,000 (operator; e.g. to find the Demo organization again)', security: ['admin'] },
    post: { summary: 'Create an organization (operator)', security: ['admin'], body: createOrgBody },
  },
  '/api/v1/admin/organizations/{orgId}/users': { post: { summary: 'Create a user in an organization (operator)', security: ['admin'], body: createUserBody } },
  '/api/v1/admin/organizations/{orgId}/api-keys': { post: { summary: 'Create an API key (operator)', security: ['admin'], body: createKeyBody } },
  '/api/v1/admin/api-keys/{id}': { delete: { summary: 'Revoke an API key (operator)', security: ['admin'] } },
  '/healthz': { get: { summary: 'Process is up' } },
  '/readyz': { get: { summary: 'Database and bus reachable' } },
  '/metrics': { get: { summary: 'Prometheus metrics' } },
};

export function buildOpenApiDocument() {
  const errorSchema = {
    type: 'object',
    required: ['statusCode', 'error', 'message', 'code'],
    properties: {
      statusCode: { type: 'integer' },
      error: { type: 'string' },
      message: { type: 'string' },
      code: { type: 'string' },
      issues: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } } },
    },
  };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [path, methods] of Object.entries(ops)) {
    paths[path] = {};
    for (const [method, op] of Object.entries(methods)) {
      const parameters = op.query
        ? Object.entries((schema(op.query) as { properties?: Record<string, unknown> }).properties ?? {}).map(([name, s]) => ({ name, in: 'query', schema: s }))
        : undefined;
      paths[path][method] = {
        summary: op.summary,
        security: op.security?.map((s) => ({ [s]: [] })) ?? [],
        ...(parameters ? { parameters } : {}),
        ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: schema(op.body) } } } } : {}),
        responses: {
          ...Object.fromEntries(Object.entries(op.responses ?? { '200': 'OK' }).map(([code, description]) => [code, { description }])),
          default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        },
      };
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'audit-stream', version: '1.0.0', description: 'Audit events of AI tool calls: ingestion and a live per-organization event stream.' },
    paths,
    components: {
      schemas: { Error: errorSchema },
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'API key (ask_...)' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'audit_stream_session' },
        admin: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
        firehoseKey: { type: 'apiKey', in: 'header', name: 'X-Amz-Firehose-Access-Key' },
      },
    },
  };
}

export function registerOpenApiRoute(app: FastifyInstance) {
  let doc: unknown;
  app.get('/openapi.json', async () => (doc ??= buildOpenApiDocument()));
}
