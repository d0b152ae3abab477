// Route schemas are zod: requests are validated (and typed) by the zod type provider; answers are written as JSON.stringify would. Query parameters a route does not declare are refused.
import type { FastifyInstance, FastifySchema } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { InvalidInput } from '../shared/domain-errors.js';

/** API routes whose query is checked against what they declare (a route declaring none takes no parameter). */
const STRICT_QUERY_PREFIX = '/api/v1/';
/**
 * Except the ingest routes: forwarders (CloudWatch, Firehose, Datadog, OTLP exporters) are configured with a URL once
 * and drop a 4xx answer without retrying, so a parameter there is ignored rather than losing their events.
 */
const LENIENT_QUERY_PREFIX = '/api/v1/ingest';

/** The parameter names a query schema declares, or null when it is not a plain object schema. */
function declaredParams(schema: unknown): string[] | null {
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : null;
}

/** A 400 naming, as its issues' paths, every query parameter the route does not take (the one error shape of invalid_query). */
export function unknownParamsError(unknown: string[]): InvalidInput {
  const issues = unknown.map((name) => ({ path: name, message: 'is not a parameter of this route' }));
  return new InvalidInput('query is invalid', issues, 'invalid_query');
}

export function registerSchemaCompilers(app: FastifyInstance): void {
  app.setValidatorCompiler((route) => {
    const validate = validatorCompiler(route as Parameters<typeof validatorCompiler>[0]);
    const known = route.httpPart === 'querystring' && route.url.startsWith(STRICT_QUERY_PREFIX) && !route.url.startsWith(LENIENT_QUERY_PREFIX) ? declaredParams(route.schema) : null;
    if (known === null) return validate;
    const knownSet = new Set(known);
    return (data: unknown) => {
      const unknown = Object.keys((data ?? {}) as object).filter((k) => !knownSet.has(k)).slice(0, 20);
      return unknown.length ? { error: unknownParamsError(unknown) } : validate(data);
    };
  });
  // An API route that declares no query takes none: it gets an empty query schema, so a stray parameter is a 400 too.
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith(STRICT_QUERY_PREFIX) || route.url.startsWith(LENIENT_QUERY_PREFIX)) return;
    const schema: FastifySchema = route.schema ?? {};
    if (schema.querystring === undefined) route.schema = { ...schema, querystring: z.object({}) };
  });
  // Response schemas declare and document the answers (and type the handlers); they do not reshape them: a body is
  // written exactly as JSON.stringify writes it, whatever its status.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
}
