// Route schemas are zod: requests are validated (and typed) by the zod type provider; answers are written as JSON.stringify would.
import type { FastifyInstance } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';

export function registerSchemaCompilers(app: FastifyInstance): void {
  app.setValidatorCompiler(validatorCompiler);
  // Response schemas declare and document the answers (and type the handlers); they do not reshape them: a body is
  // written exactly as JSON.stringify writes it, whatever its status.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
}
