// Serves the built dashboard (dist/public) at / and /assets/*.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';

const here = path.dirname(fileURLToPath(import.meta.url));
/** dist/public, found from src/http or dist/src/http. */
export const PUBLIC_DIR = path.resolve(here, here.includes(`${path.sep}dist${path.sep}`) ? '../../public' : '../../dist/public');

export async function registerDashboardRoutes(app: FastifyInstance, publicDir = PUBLIC_DIR) {
  if (!existsSync(path.join(publicDir, 'index.html'))) {
    const schema = { summary: 'The live dashboard (here: how to build it)', security: [], response: { 200: { content: { 'text/plain': { schema: z.string() } } } } };
    app.withTypeProvider<ZodTypeProvider>().get('/', { schema }, async (_req, reply) =>
      reply.type('text/plain').send('The dashboard is not built: run `npm run build` (npm start does it).\n'),
    );
    return;
  }
  await app.register(fastifyStatic, {
    root: publicDir,
    prefix: '/',
    index: ['index.html'],
    wildcard: false,
    cacheControl: true,
    maxAge: 0,
    // The page loads only its own script and stylesheet and talks only to this service.
    setHeaders: (res) => {
      res.setHeader('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Referrer-Policy', 'same-origin');
    },
  });
}
