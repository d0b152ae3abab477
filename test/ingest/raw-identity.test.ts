// POST /api/v1/ingest/events, both backends: an event is deduplicated only by its id or the request's Idempotency-Key + position.
import { describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, type Json } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { ingestedEvents } from './ingest-kit.js';

/** The README's first example event: no id, no timestamp. */
const README_EVENT = { serverId: 'github-mcp', sessionId: 'sess-1', toolName: 'create_issue', action: 'allow', latencyMs: 42 };

function postWithKey(baseUrl: string, key: string, body: unknown, idempotencyKey: string, contentType = 'application/json'): Promise<Json> {
  return http(`${baseUrl}/api/v1/ingest/events`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': contentType, 'idempotency-key': idempotencyKey },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe.each(backendNames)('raw ingest identity (%s)', (backendName) => {
  const { app } = suiteApp(backendName, {}, {}, { inject: true });

  it("stores a real repeat: the README's example sent twice is two audit records", async () => {
    const org = await createOrg(app.url);
    expect((await postEvents(app.url, org.key, README_EVENT)).body).toEqual({ accepted: 1, duplicates: 0 });
    expect((await postEvents(app.url, org.key, README_EVENT)).body).toEqual({ accepted: 1, duplicates: 0 });
    // Identical entries in one request are identical calls too.
    expect((await postEvents(app.url, org.key, [README_EVENT, README_EVENT])).body).toEqual({ accepted: 2, duplicates: 0 });
    const items = await ingestedEvents(app.url, org.key);
    expect(items).toHaveLength(4);
    expect(new Set(items.map((e) => e.seq)).size).toBe(4);
  });

  it('stores a request retried with the same Idempotency-Key once and answers it with the same counts', async () => {
    const org = await createOrg(app.url);
    const batch = [README_EVENT, { ...README_EVENT, id: 'evt-1' }, { ...README_EVENT, id: 'evt-1' }, README_EVENT];
    const first = await postWithKey(app.url, org.key, batch, 'batch-7f3a');
    expect(first.body).toEqual({ accepted: 3, duplicates: 1 });
    for (let i = 0; i < 3; i++) expect((await postWithKey(app.url, org.key, batch, 'batch-7f3a')).body).toEqual(first.body);
    expect(await ingestedEvents(app.url, org.key)).toHaveLength(3);
    // An event's own id still identifies it across requests: another key, the same id is a duplicate.
    expect((await postWithKey(app.url, org.key, [{ ...README_EVENT, id: 'evt-1' }], 'batch-8b01')).body).toEqual({ accepted: 0, duplicates: 1 });
    // NDJSON with a key behaves the same.
    const ndjson = `${JSON.stringify(README_EVENT)}\n${JSON.stringify(README_EVENT)}\n`;
    expect((await postWithKey(app.url, org.key, ndjson, 'nd-1', 'application/x-ndjson')).body).toEqual({ accepted: 2, duplicates: 0 });
    expect((await postWithKey(app.url, org.key, ndjson, 'nd-1', 'application/x-ndjson')).body).toEqual({ accepted: 2, duplicates: 0 });
    expect(await ingestedEvents(app.url, org.key)).toHaveLength(5);
  });

  it('answers concurrent requests with one key once: one stores, the others answer its counts', async () => {
    const org = await createOrg(app.url);
    const batch = Array.from({ length: 20 }, (_, i) => ({ ...README_EVENT, latencyMs: i }));
    const answers = await Promise.all(Array.from({ length: 6 }, () => postWithKey(app.url, org.key, batch, 'race-1')));
    for (const a of answers) expect(a.body).toEqual({ accepted: 20, duplicates: 0 });
    expect(await ingestedEvents(app.url, org.key)).toHaveLength(20);
  });

  it('refuses a key reused for a different request (422) and an unusable key (400), storing nothing', async () => {
    const org = await createOrg(app.url);
    expect((await postWithKey(app.url, org.key, [README_EVENT], 'k-1')).status).toBe(200);
    const reused = await postWithKey(app.url, org.key, [{ ...README_EVENT, toolName: 'delete_repo' }], 'k-1');
    expect(reused.status).toBe(422);
    expect(reused.body).toMatchObject({ statusCode: 422, code: 'idempotency_key_reused' });
    for (const bad of ['x'.repeat(201), 'has space', 'café', '""']) {
      const r = await postWithKey(app.url, org.key, [README_EVENT], bad);
      expect(r.status, bad).toBe(400);
      expect(r.body.issues[0].path).toBe('headers.idempotency-key');
    }
    expect(await ingestedEvents(app.url, org.key)).toHaveLength(1);
    // Keys belong to an organization: another one may use the same key for its own request.
    const other = await createOrg(app.url);
    expect((await postWithKey(app.url, other.key, [{ ...README_EVENT, toolName: 'delete_repo' }], 'k-1')).body).toEqual({ accepted: 1, duplicates: 0 });
    // A quoted key (the IETF draft's structured-field string) is the same key.
    expect((await postWithKey(app.url, org.key, [README_EVENT], '"k-1"')).body).toEqual({ accepted: 1, duplicates: 0 });
    expect(await ingestedEvents(app.url, org.key)).toHaveLength(1);
  });
});
