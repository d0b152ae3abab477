// GET /openapi.json: the OpenAPI 3.1 document @fastify/swagger builds from every route's declared zod schema.
import fastifySwagger, { type SwaggerTransform } from '@fastify/swagger';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { createJsonSchemaTransform, createJsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorBodySchema } from './route-schemas.js';

/**
 * A route that reads its body itself (the ingest routes: NDJSON, gzip, several formats) documents the usual body under
 * `documentedBody`: it is written into the document as the request body, and never used to validate the request.
 */
function withDocumentedBodies(zodTransform: SwaggerTransform): SwaggerTransform {
  return (input) => {
    const { documentedBody, ...schema } = (input.schema ?? {}) as FastifySchema & { documentedBody?: unknown };
    return zodTransform(documentedBody === undefined ? input : { ...input, schema: { ...schema, body: documentedBody } });
  };
}

/** Registers the document collector; call it before any route is registered, and the route once they all are. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  // Schemas named here are written once under components.schemas and referenced.
  const schemaRegistry = z.registry<{ id?: string }>();
  schemaRegistry.add(errorBodySchema, { id: 'Error' });
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'audit-stream', version: '1.0.0', description: 'Audit events of AI tool calls: ingestion and a live per-organization event stream.' },
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'API key (ask_...)' },
          cookie: { type: 'apiKey', in: 'cookie', name: 'audit_stream_session' },
          admin: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
          firehoseKey: { type: 'apiKey', in: 'header', name: 'X-Amz-Firehose-Access-Key' },
        },
      },
    },
    transform: withDocumentedBodies(createJsonSchemaTransform({ skipList: [], schemaRegistry })),
    transformObject: createJsonSchemaTransformObject({ schemaRegistry }),
  });
}

export function registerOpenApiRoute(app: FastifyInstance): void {
  app.get('/openapi.json', { schema: { summary: 'This OpenAPI document', security: [] } }, async () => app.swagger());
}
