// /openapi.json is generated from the routes: every registered route is in it, and every route in it answers.
import type { RouteOptions } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { http } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

interface Registered {
  method: string;
  url: string;
  hidden: boolean;
}

/** Fastify's `:id` as OpenAPI's `{id}`. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe('openapi.json and the registered routes', () => {
  const routes: Registered[] = [];
  const onRoute = (r: RouteOptions) => {
    for (const method of [r.method].flat()) routes.push({ method, url: r.url, hidden: Boolean((r.schema as { hide?: boolean } | undefined)?.hide) });
  };
  const { app } = suiteApp('embedded', {}, { onRoute });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let doc: any;

  beforeAll(async () => {
    const r = await http(`${app.url}/openapi.json`);
    expect(r.status).toBe(200);
    doc = r.body;
  });

  it('documents every registered route; the only routes left out are the dashboard files and CORS preflights', () => {
    // HEAD routes are the automatic twins of GET routes, documented through their GET.
    const own = routes.filter((r) => r.method !== 'HEAD');
    expect(own.length).toBeGreaterThan(25);
    const undocumented = own.filter((r) => !r.hidden && !doc.paths[openApiPath(r.url)]?.[r.method.toLowerCase()]);
    expect(undocumented).toEqual([]);
    for (const r of own.filter((x) => x.hidden)) {
      expect(r.url.startsWith('/api/'), `${r.method} ${r.url} is hidden`).toBe(false);
      expect(['GET', 'OPTIONS']).toContain(r.method);
    }
    for (const path of ['/api/v1/events', '/api/v1/ingest/events', '/api/v1/ingest/cloudwatch', '/api/v1/ingest/firehose', '/api/v1/ingest/datadog']) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
  });

  it('documents each route with a summary, its parameters and its answers', () => {
    for (const [path, methods] of Object.entries<Record<string, { summary?: string; responses?: Record<string, unknown> }>>(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        expect(op.summary, `${method} ${path}`).toEqual(expect.any(String));
        expect(Object.keys(op.responses ?? {}).length, `${method} ${path}`).toBeGreaterThan(0);
      }
    }
    const list = doc.paths['/api/v1/audit-events'].get;
    expect(list.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(expect.arrayContaining(['query:limit', 'query:cursor', 'query:type']));
    expect(list.responses['200'].content['application/json'].schema.properties.items.items.required).toEqual(expect.arrayContaining(['seq', 'occurredAt', 'metadata']));
    const revoke = doc.paths['/api/v1/admin/api-keys/{id}'].delete;
    expect(revoke.parameters).toEqual([expect.objectContaining({ in: 'path', name: 'id', required: true })]);
    const create = doc.paths['/api/v1/admin/organizations'].post;
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['name']);
    // Ingest routes read their bodies themselves: the raw body is documented, Firehose answers in its own shape.
    const raw = doc.paths['/api/v1/ingest/events'].post;
    expect(raw.requestBody.content['application/json'].schema.anyOf).toHaveLength(2);
    expect(Object.keys(raw.requestBody.content)).toEqual(['application/json', 'application/x-ndjson', 'application/ndjson', 'application/jsonl']);
    const firehoseError = doc.paths['/api/v1/ingest/firehose'].post.responses.default.content['application/json'].schema;
    expect(firehoseError.required).toEqual(['requestId', 'timestamp', 'errorMessage']);
    expect(doc.paths['/api/v1/events'].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(
      expect.arrayContaining(['query:types', 'query:lastEventId', 'header:last-event-id']),
    );
  });

  it('every documented route answers on the listening server (no route is documented that does not exist)', async () => {
    const checked: string[] = [];
    for (const [path, methods] of Object.entries<object>(doc.paths)) {
      const url = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
      for (const method of Object.keys(methods)) {
        const init: RequestInit = { method: method.toUpperCase() };
        if (method === 'post' || method === 'put') Object.assign(init, { headers: { 'content-type': 'application/json' }, body: '{}' });
        const r = await http(`${app.url}${url}`, init);
        expect(r.status, `${method} ${path}`).not.toBe(404);
        checked.push(`${method} ${path}`);
      }
    }
    expect(checked.length).toBeGreaterThan(25);
  });
});
