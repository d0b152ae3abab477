// What an organization's profiles build at run time is bounded (RECOGNITION_MAX_WORK_PER_RECORD and _PER_REQUEST):
// an expression that grows strings or lists past its record's budget fails and the record falls through, the
// process's memory untouched; `replace` and `join` are linear and keep CEL's meaning; a request's records stop running
// the organization's profiles once the request's budget is spent; draft profiles are counted before they are compiled.
import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, createOrg, http, login, type TestOrg } from '../helpers/app.js';
import { backendNames } from '../helpers/backends.js';
import { suiteApp } from '../helpers/suite-app.js';
import { ingestedEvents } from '../ingest/ingest-kit.js';

const profile = (id: string, when: string, tool = 'attributes.thing') => ({ id, description: '', source: '', when, fields: { tool } });

describe.each(backendNames)('recognition run-time work budget (%s backend)', (backendName) => {
  const { app } = suiteApp(backendName, { RECOGNITION_MAX_WORK_PER_RECORD: '2500', RECOGNITION_MAX_WORK_PER_REQUEST: '4000', RECOGNITION_MAX_PROFILES_PER_ORG: '3' });
  let org: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
  });

  const testLine = (fields: Record<string, unknown>, profiles: unknown[]) =>
    http(`${app.url}/api/v1/recognition/test`, { method: 'POST', headers: bearer(org.key), json: { source: 'line', sample: JSON.stringify(fields), useStored: false, profiles } });

  it('an expression that grows a string past the record budget fails; the record falls through and the service stays up', async () => {
    // Each quote doubles a string of backslashes: 12 of them would make 4000 × 4096 characters.
    let grown = 'attributes.pad';
    for (let i = 0; i < 12; i++) grown = `strings.quote(${grown})`;
    const hostile = [
      profile('quotes', `${grown}.size() > 0`),
      profile('split-join', `attributes.pad.split('').join('${'z'.repeat(400)}').size() > 0`),
      profile('replace', `attributes.pad.replace('\\\\', '${'z'.repeat(400)}').size() > 0`),
    ];
    for (const p of hostile) {
      const r = await testLine({ thing: 'search', pad: '\\'.repeat(4000) }, [p]);
      expect(r.status).toBe(200);
      expect(r.body.failures).toBe(1);
      expect(r.body.events[0].profile).toBeNull();
    }
    // RE2's time grows with the program counted repetitions expand: charged before it runs, by text × program.
    const slowMatch = await testLine({ thing: 'search', pad: 'p'.repeat(2000) }, [profile('slow-match', "attributes.pad.matches('.{1000}.{1000}.{1000}x')")]);
    expect([slowMatch.body.failures, slowMatch.body.events[0].profile]).toEqual([1, null]);
    const quickMatch = await testLine({ thing: 'search', pad: 'p'.repeat(4000) }, [profile('quick-match', "attributes.thing.matches('^se.{3}h$')")]);
    expect(quickMatch.body.events[0]).toMatchObject({ toolName: 'search', profile: { id: 'quick-match' } });
    // The same profiles on a small record are within the budget and read it.
    const small = await testLine({ thing: 'search', pad: '\\\\' }, [profile('replace', "attributes.pad.replace('\\\\', 'zz').size() == 4")]);
    expect(small.body.events[0]).toMatchObject({ toolName: 'search', profile: { id: 'replace' } });
  });

  it('replace and join keep their meaning (all, first n, an empty pattern; separators)', async () => {
    const cases: [string, string][] = [
      ["attributes.thing.replace('a', 'xy')", 'bxyxyxy'],
      ["attributes.thing.replace('a', 'xy', 2)", 'bxyxya'],
      ["attributes.thing.replace('a', 'xy', 0)", 'baaa'],
      ["attributes.thing.replace('', '-')", '-b-a-a-a-'],
      ["attributes.thing.replace('', '-', 2)", '-b-aaa'],
      ["attributes.thing.split('a').join('+')", 'b+++'],
      ["['x', 'y', 'z'].join()", 'xyz'],
    ];
    for (const [tool, expected] of cases) {
      const r = await testLine({ thing: 'baaa' }, [profile('p', 'true', tool)]);
      expect([tool, r.body.events[0].toolName]).toEqual([tool, expected]);
    }
  });

  it('more draft profiles than RECOGNITION_MAX_PROFILES_PER_ORG are refused before any of them is compiled', async () => {
    // Four drafts (the bound is 3 here), the first of which does not compile: the count answers, not the compiler.
    const drafts = [profile('broken', 'attributes.'), ...[1, 2, 3].map((i) => profile(`p${i}`, 'true'))];
    const r = await testLine({ thing: 'search' }, drafts);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('more than 3 draft profiles (RECOGNITION_MAX_PROFILES_PER_ORG)');
    // Within the bound, the broken draft is named.
    const named = await testLine({ thing: 'search' }, drafts.slice(0, 3));
    expect(named.body.issues[0].path).toBe('profiles.0.when');
  });

  it("a request's records stop running the organization's profiles once RECOGNITION_MAX_WORK_PER_REQUEST is spent", async () => {
    const fresh = await createOrg(app.url);
    const cookie = await login(app.url, fresh.email, fresh.password);
    // About 1005 units per record (size() reads the 1000-character pad): three records fit in 4000, not a fourth.
    const counting = profile('counting', "attributes.pad.size() == 1000 && 'thing' in attributes");
    expect((await http(`${app.url}/api/v1/recognition/profiles`, { method: 'POST', headers: { cookie, origin: app.url }, json: counting })).status).toBe(201);
    const message = JSON.stringify({ thing: 'search', pad: 'p'.repeat(1000) });
    const events = [1, 2, 3, 4].map((i) => ({ message, timestamp: Date.now() + i }));
    const sent = await http(`${app.url}/api/v1/ingest/cloudwatch`, { method: 'POST', headers: bearer(fresh.key), json: { logGroup: '/g', logStream: 's', events } });
    expect(sent.status).toBe(200);
    const stored = await ingestedEvents(app.url, fresh.key);
    const readBy = stored.map((e) => (e.metadata?.recognition as { profile?: string } | undefined)?.profile ?? null);
    expect(readBy).toEqual(['counting', 'counting', 'counting', null]);
  });
});
