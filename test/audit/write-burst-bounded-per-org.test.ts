// A burst of one organization's writes is bounded and does not hold back another organization's: 429 beyond
// ORG_WRITE_QUEUE_MAX waiting, the waiting ones stored whole. Postgres only: on the embedded database every query
// waits for the one connection, so a held write would hold everything there.
import { describe, expect, it } from 'vitest';
import { realBackendAvailable } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, toolCall } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

describe.runIf(realBackendAvailable)('a write burst bounded per organization (Postgres)', () => {
  const { app } = suiteApp('real', { ORG_WRITE_QUEUE_MAX: '2', ANOMALY_MIN_RATE: '1000000000' });

  it('refuses writes beyond ORG_WRITE_QUEUE_MAX waiting with 429 and Retry-After; the waiting ones are stored whole', async () => {
    const [noisy, quiet] = [await createOrg(app.url), await createOrg(app.url)];
    // A long write of the noisy organization holds its turn until released (as a 10,000-event request would).
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const holding = app.ctx.eventLog.appendChecked(noisy.id, async () => {
      await gate;
      return { events: [], result: undefined };
    });
    const posts = Array.from({ length: 5 }, (_, r) => postEvents(app.url, noisy.key, Array.from({ length: 100 }, (_, i) => toolCall(r * 100 + i, { sessionId: null }))));
    // Two wait behind the running write; the three others are refused at once, while the turn is still held.
    const settledEarly: number[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${settledEarly.length} answers while the turn was held`)), 30_000);
      posts.forEach((p, i) =>
        p.then(() => {
          settledEarly.push(i);
          if (settledEarly.length === 3) {
            clearTimeout(timer);
            resolve();
          }
        }),
      );
    });
    expect(settledEarly).toHaveLength(3);
    // Another organization writes while the noisy one's turn is held: its writes do not wait behind them.
    expect((await postEvents(app.url, quiet.key, [toolCall(1, { sessionId: null })])).status).toBe(200);
    release();
    await holding;
    const results = await Promise.all(posts);
    const ok = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    expect([ok.length, limited.length]).toEqual([2, 3]);
    expect(limited[0].body).toMatchObject({ statusCode: 429, code: 'too_many_requests' });
    expect(limited[0].headers.get('retry-after')).toBe('1');
    expect(ok.map((r) => r.body)).toEqual([{ accepted: 100, duplicates: 0 }, { accepted: 100, duplicates: 0 }]);
    // Stored seqs are gapless: the refused requests stored nothing.
    const stored = await http(`${app.url}/api/v1/audit-events?limit=1`, { headers: bearer(noisy.key) });
    expect(stored.body.items[0].seq).toBe(200);
  });
});
