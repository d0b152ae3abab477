// GET /openapi.json: the OpenAPI 3.1 document @fastify/swagger builds from every route's declared zod schema, with operation ids, the 4xx answers and the package version.
import { readFileSync } from 'node:fs';
import fastifySwagger, { type SwaggerTransform } from '@fastify/swagger';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { createJsonSchemaTransform, createJsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorBodySchema } from './route-schemas.js';

/** The version of the package this code belongs to: the nearest package.json above this module (src/ or dist/src/). */
export function packageVersion(from: URL = new URL('.', import.meta.url)): string {
  for (let dir = from; ; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'audit-stream' && pkg.version) return pkg.version;
    } catch {
      /* none here: look further up */
    }
    if (new URL('..', dir).pathname === dir.pathname) return '0.0.0';
  }
}

/**
 * The operation id of a route: its method and path in camel case, path parameters as `By<Name>`, without the `/api/v1`
 * prefix (GET /api/v1/sessions/:id -> getSessionsById). Unique, since method and path are.
 */
export function operationIdOf(method: string, url: string): string {
  const words = url
    .replace(/^\/api\/v1(?=\/|$)/, '')
    .split(/[/\-_.]+/)
    .filter(Boolean)
    .map((w) => (w.startsWith(':') ? `By${w.slice(1, 2).toUpperCase()}${w.slice(2)}` : w.replace(/[^A-Za-z0-9]/g, '')))
    .map((w) => w.slice(0, 1).toUpperCase() + w.slice(1));
  return method.toLowerCase() + (words.join('') || 'Root');
}

/** The client errors a route can answer, from what it declares: every request can be malformed; credentials, ids and bodies add theirs. */
function clientErrorsOf(method: string, url: string, schema: FastifySchema & { security?: unknown[] }): number[] {
  const codes = [400];
  if (Array.isArray(schema.security) && schema.security.length > 0) codes.push(401, 403);
  if (url.includes(':')) codes.push(404);
  if (method === 'POST' || method === 'PUT') codes.push(413, 415);
  if (url === '/api/v1/events' || url.startsWith('/api/v1/ingest') || url.startsWith('/api/v1/audit-events/export') || url === '/api/v1/auth/login') codes.push(429);
  return codes;
}

/**
 * Per route: the usual body of a route that reads its body itself (the ingest routes: NDJSON, gzip, several formats),
 * declared as `documentedBody`, is written as the request body (never used to validate); an operation id; and each
 * client error the route can answer, in the route's error shape (its `default` answer: the service's one error shape,
 * or the sender's protocol's).
 */
function documentTransform(zodTransform: SwaggerTransform): SwaggerTransform {
  return (input) => {
    const { documentedBody, ...schema } = (input.schema ?? {}) as FastifySchema & { documentedBody?: unknown; security?: unknown[]; response?: Record<string, unknown> };
    const method = String(input.route.method);
    const response: Record<string, unknown> = { ...(schema.response ?? {}) };
    const errorShape = response.default ?? errorBodySchema;
    for (const code of clientErrorsOf(method, input.url, schema)) if (response[code] === undefined) response[code] = errorShape;
    const withDocs = { ...schema, operationId: operationIdOf(method, input.url), response, ...(documentedBody === undefined ? {} : { body: documentedBody }) };
    return zodTransform({ ...input, schema: withDocs as FastifySchema });
  };
}

type TransformObject = ReturnType<typeof createJsonSchemaTransformObject>;

/** Drops named schemas nothing refers to (the registry writes an input and an output form of each; most routes use one). */
function withoutUnusedSchemas(transformObject: TransformObject): TransformObject {
  return (input) => {
    const doc = transformObject(input) as { components?: { schemas?: Record<string, unknown> } };
    const schemas = doc.components?.schemas;
    if (!schemas) return doc as ReturnType<TransformObject>;
    const text = JSON.stringify({ ...doc, components: { ...doc.components, schemas: {} } });
    for (const name of Object.keys(schemas)) if (!text.includes(`"#/components/schemas/${name}"`)) delete schemas[name];
    return doc as ReturnType<TransformObject>;
  };
}

/** Registers the document collector; call it before any route is registered, and the route once they all are. */
/** `keyHeaders`: the headers ingest sources read API keys from (each becomes an apiKey security scheme of that name). */
export async function registerOpenApi(app: FastifyInstance, keyHeaders: readonly string[] = []): Promise<void> {
  // Schemas named here are written once under components.schemas and referenced.
  const schemaRegistry = z.registry<{ id?: string }>();
  schemaRegistry.add(errorBodySchema, { id: 'Error' });
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'audit-stream',
        version: packageVersion(),
        description: 'Audit events of AI tool calls: ingestion, stored history and a live per-organization event stream.',
        license: { name: 'UNLICENSED', identifier: 'UNLICENSED' },
      },
      // Relative: the instance that serves this document (behind a proxy, its public address).
      servers: [{ url: '/', description: 'the instance serving this document' }],
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'API key (ask_...)' },
          cookie: { type: 'apiKey', in: 'cookie', name: 'audit_stream_session' },
          admin: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
          // Senders that carry the API key in a header of their own protocol (an ingest source's keyHeader).
          ...Object.fromEntries(keyHeaders.map((h) => [h, { type: 'apiKey', in: 'header', name: h }])),
        },
      },
    },
    transform: documentTransform(createJsonSchemaTransform({ skipList: [], schemaRegistry })),
    transformObject: withoutUnusedSchemas(createJsonSchemaTransformObject({ schemaRegistry })),
  });
}

export function registerOpenApiRoute(app: FastifyInstance): void {
  const schema = { summary: 'This OpenAPI document', security: [], response: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: z.object({ openapi: z.string() }).loose() } } } } };
  app.get('/openapi.json', { schema }, async () => app.swagger());
}
