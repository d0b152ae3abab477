// deploy/nginx.conf run by a real nginx in front of a running instance: the public listener serves the dashboard, the
// API and the stream but never /metrics or the admin API, whatever their spelling; the internal listener serves only those.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, bearer, createOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

const NGINX = process.env.NGINX_PATH ?? '/usr/sbin/nginx';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A GET with the path sent exactly as written (fetch would normalize `..` and `%6D`). */
function rawGet(port: number, rawPath: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: rawPath, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe.runIf(existsSync(NGINX))('deploy/nginx.conf with a real nginx', () => {
  const { app } = suiteApp('embedded');
  let dir = '';
  let nginx: ChildProcess | null = null;
  let pub = 0;
  let internal = 0;
  let key = '';
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  beforeAll(async () => {
    key = (await createOrg(app.url)).key;
    const appPort = new URL(app.url).port;
    [pub, internal] = [await freePort(), await freePort()];
    dir = await mkdtemp(path.join(tmpdir(), 'nginx-conf-'));
    // The shipped file with only its addresses changed: both upstream instances are the test's, the listeners on spare ports.
    const shipped = await readFile('deploy/nginx.conf', 'utf8');
    const conf = shipped
      .replace(/\b(app1|app2):3000\b/g, `127.0.0.1:${appPort}`)
      .replace('listen 80;', `listen 127.0.0.1:${pub};`)
      .replace('listen 8081;', `listen 127.0.0.1:${internal};`)
      .replace('http {', `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nhttp {\n  access_log off;\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;`);
    expect(conf).not.toMatch(/app[12]:3000|listen 80;|listen 8081;/);
    await writeFile(path.join(dir, 'nginx.conf'), conf);
    nginx = spawn(NGINX, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    nginx.stderr?.on('data', (c) => (out += c));
    // Ready once the public listener answers through to the service (nginx starts in milliseconds; 15 s is the failure path).
    const deadline = Date.now() + 15_000;
    for (;;) {
      const status = (await rawGet(pub, '/healthz').catch(() => ({ status: 0 }))).status;
      if (status === 200) break;
      if (Date.now() > deadline || nginx.exitCode !== null) throw new Error(`nginx did not start: ${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((r) => nginx?.once('exit', r));
      nginx.kill('SIGQUIT');
      await exited;
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the public listener serves the dashboard, the API and ingest', async () => {
    expect((await rawGet(pub, '/')).status).toBe(200);
    expect((await rawGet(pub, '/api/v1/audit-events')).status).toBe(401);
    expect((await rawGet(pub, '/api/v1/audit-events', bearer(key))).status).toBe(200);
    expect((await rawGet(pub, '/openapi.json')).status).toBe(200);
  });

  it('the public listener never serves /metrics or the admin API, however the path is written', async () => {
    for (const p of ['/metrics', '/metrics/', '/metrics?x=1', '//metrics', '/%6Detrics', '/./metrics', '/api/../metrics']) {
      const r = await rawGet(pub, p);
      expect(r.status, p).toBe(404);
      expect(r.body, p).not.toContain('audit_stream_');
    }
    for (const p of ['/api/v1/admin/organizations', '/api/v1/admin/organizations/', '//api/v1/admin/organizations', '/api/v1/%61dmin/organizations', '/api/v1/x/../admin/organizations', '/api/v1/admin%2Forganizations']) {
      const r = await rawGet(pub, p, admin);
      expect(r.status, p).toBe(404);
      expect(r.body, p).not.toContain('"items"');
      expect(JSON.parse(r.body), p).toMatchObject({ statusCode: 404, code: 'not_found' });
    }
  });

  it('the internal listener serves each instance\'s metrics and the admin API, and nothing else', async () => {
    for (const instance of ['app1', 'app2']) {
      const r = await rawGet(internal, `/metrics/${instance}`);
      expect(r.status, instance).toBe(200);
      expect(r.body).toContain('audit_stream_ingest_requests_total');
    }
    const orgs = await rawGet(internal, '/api/v1/admin/organizations', admin);
    expect(orgs.status).toBe(200);
    expect(JSON.parse(orgs.body).items.length).toBeGreaterThan(0);
    expect((await rawGet(internal, '/api/v1/admin/organizations')).status).toBe(401);
    for (const p of ['/', '/metrics', '/api/v1/audit-events', '/api/v1/events']) expect((await rawGet(internal, p, bearer(key))).status, p).toBe(404);
  });
});
