// Text the database cannot store, sent where it is stored as given (a recognition profile's description, source and
// expressions are JSON): U+0000 and unpaired UTF-16 surrogates answer 400 invalid_text, never 500, and nothing is stored.
import { beforeAll, describe, expect, it } from 'vitest';
import { createOrg, http, login, type TestOrg } from '../helpers/app.js';
import { backendNames } from '../helpers/backends.js';
import { suiteApp } from '../helpers/suite-app.js';

describe.each(backendNames)('unstorable text in a stored JSON value (%s backend)', (backendName) => {
  const { app } = suiteApp(backendName, {});
  let org: TestOrg;
  let cookie: string;

  beforeAll(async () => {
    org = await createOrg(app.url);
    cookie = await login(app.url, org.email, org.password);
  });

  /** Posts a profile as raw JSON text, so escapes such as \\ud800 reach the server as written. */
  const postProfile = (json: string) =>
    http(`${app.url}/api/v1/recognition/profiles`, { method: 'POST', headers: { cookie, origin: app.url, 'content-type': 'application/json' }, body: json });

  it('answers 400 invalid_text for U+0000 or an unpaired surrogate in a profile, and stores nothing', async () => {
    const bodies = [
      '{"id":"nul-description","when":"true","fields":{},"description":"a\\u0000b"}',
      '{"id":"nul-literal","when":"true","fields":{"tool":"\\"a\\u0000\\""}}',
      '{"id":"lone-high","when":"true","fields":{},"description":"\\ud800"}',
      '{"id":"lone-low","when":"true","fields":{},"source":"\\udfff x"}',
    ];
    for (const body of bodies) {
      const r = await postProfile(body);
      expect([body, r.status, r.body.code]).toEqual([body, 400, 'invalid_text']);
    }
    const listed = await http(`${app.url}/api/v1/recognition/profiles`, { headers: { cookie } });
    expect(listed.body.items).toEqual([]);
    // A well-formed pair is stored as sent.
    const ok = await postProfile('{"id":"pair","when":"true","fields":{},"description":"\\ud83d\\ude00"}');
    expect(ok.status).toBe(201);
    expect(ok.body.description).toBe('😀');
  });
});
