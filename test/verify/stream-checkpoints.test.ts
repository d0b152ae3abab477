// With checkpoints=true the SSE stream carries the log's signed checkpoints as named `checkpoint` events (issued on any
// instance), without an id, so resuming by Last-Event-ID is unchanged; a stream that did not ask sees nothing new.
import { afterAll, describe, expect, it } from 'vitest';
import { bearer, createOrg, startApp, type RunningApp } from '../helpers/app.js';
import { backendNames } from '../helpers/backends.js';
import { openSse } from '../helpers/sse.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openNote, parseVerifierKey } from '../../src/verify/signed-note.js';
import { parseCheckpointText } from '../../src/verify/checkpoint.js';
import { logEvent, signingKeyFile, upTo } from './log-helpers.js';

const env = { SIGNING_KEY_FILE: signingKeyFile(), ANOMALY_MIN_RATE: '1000000000', CHECKPOINT_INTERVAL_MS: '3600000', CHECKPOINT_EVERY_EVENTS: '100000000' };

describe.each(backendNames)('checkpoint events on the stream (%s)', (backendName) => {
  const { app, backend } = suiteApp(backendName, env);
  let other: RunningApp | null = null;
  afterAll(async () => {
    await other?.close();
  });

  it('sends each checkpoint issued (here or on another instance) to streams that asked, and to no other', async () => {
    // Embedded: one instance (its sibling would be another database); real: the checkpoint is issued on a second one.
    other = backendName === 'real' ? await startApp({ ...(await backend.sibling()), ...env }) : null;
    const issuer = other ?? app;
    const org = await createOrg(app.url);
    const asking = await openSse(`${app.url}/api/v1/events?checkpoints=true`, bearer(org.key));
    const plain = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    expect([asking.status, plain.status]).toEqual([200, 200]);
    await app.ctx.eventLog.append(org.id, upTo(5).map((i) => logEvent(`raw:id:s-${i}`)));
    await Promise.all([asking.waitForCount(5), plain.waitForCount(5)]);
    const issued = (await issuer.ctx.verifiableLog.checkpointer!.issue(org.id))!;
    await asking.waitFor((c) => c.events.some((e) => e.event === 'checkpoint'), 15_000, 'a checkpoint event');
    const cp = asking.events.find((e) => e.event === 'checkpoint')!;
    expect(cp.id).toBeNull();
    expect(cp.json).toEqual({ size: 5, rootHash: issued.root.toString('base64'), note: issued.note });
    expect(parseCheckpointText(openNote(cp.json.note, [parseVerifierKey(app.ctx.verifiableLog.verifierKey!)]).text).size).toBe(5);
    expect(asking.lastEventId()).toBe('5');
    // The next event reaches both after the checkpoint did: the stream that did not ask got none.
    await app.ctx.eventLog.append(org.id, [logEvent('raw:id:s-6')]);
    await Promise.all([asking.waitFor((c) => c.lastEventId() === '6'), plain.waitFor((c) => c.lastEventId() === '6')]);
    expect(plain.events.map((e) => e.event)).toEqual(Array(6).fill('tool_call'));
    expect(asking.events.map((e) => e.event)).toEqual([...Array(5).fill('tool_call'), 'checkpoint', 'tool_call']);
    asking.close();
    plain.close();
  });

  it('refuses a malformed checkpoints parameter with 400', async () => {
    const org = await createOrg(app.url);
    const r = await fetch(`${app.url}/api/v1/events?checkpoints=yes-please`, { headers: bearer(org.key) });
    expect(r.status).toBe(400);
    await r.body?.cancel();
  });
});
