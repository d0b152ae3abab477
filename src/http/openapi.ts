// GET /openapi.json: the OpenAPI 3.1 document @fastify/swagger builds from every route's declared zod schema.
import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { createJsonSchemaTransform } from 'fastify-type-provider-zod';

/** Registers the document collector; call it before any route is registered, and the route once they all are. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
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
    transform: createJsonSchemaTransform({ skipList: [] }),
  });
}

export function registerOpenApiRoute(app: FastifyInstance): void {
  app.get('/openapi.json', { schema: { summary: 'This OpenAPI document', security: [] } }, async () => app.swagger());
}
