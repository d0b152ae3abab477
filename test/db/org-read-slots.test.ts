// The per-organization read limiter: slots per organization, a FIFO queue bounded for new reads, continuing reads that
// always wait their turn, and organizations that never wait for each other.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createOrgReadSlots } from '../../src/db/org-read-slots.js';
import { RateLimited } from '../../src/shared/domain-errors.js';

/** A read that runs until `finish()` is called; `started` says whether it got its slot. */
function heldRead() {
  let finish!: () => void;
  const gate = new Promise<void>((resolve) => (finish = resolve));
  const read = { started: false, finish, run: async () => {
    read.started = true;
    await gate;
    return 'done';
  } };
  return read;
}

const turn = () => new Promise((r) => setImmediate(r));

describe('organization read slots', () => {
  it('runs at most `slots` reads of an organization at once, the others in arrival order, and other organizations at once', async () => {
    const events = { waited: 0, refused: 0 };
    const slots = createOrgReadSlots({ slots: 2, queueMax: 10, onWait: () => events.waited++, onRefuse: () => events.refused++ });
    const reads = Array.from({ length: 5 }, () => heldRead());
    const done = reads.map((r) => slots.run('a', r.run));
    await turn();
    expect(reads.map((r) => r.started)).toEqual([true, true, false, false, false]);
    expect(slots.load('a')).toEqual({ running: 2, waiting: 3 });
    // Another organization is not behind them.
    const other = heldRead();
    const otherDone = slots.run('b', other.run);
    await turn();
    expect(other.started).toBe(true);
    other.finish();
    await otherDone;
    // The second ends first: the next in line (the third) takes its slot, not a later one.
    reads[1].finish();
    await turn();
    expect(reads.map((r) => r.started)).toEqual([true, true, true, false, false]);
    for (const r of reads) r.finish();
    expect(await Promise.all(done)).toEqual(Array(5).fill('done'));
    expect(slots.load('a')).toEqual({ running: 0, waiting: 0 });
    expect(events).toEqual({ waited: 3, refused: 0 });
  });

  it('refuses a new read with 429 once `queueMax` wait, while a continuing read still queues and a failed read frees its slot', async () => {
    let refused = 0;
    const slots = createOrgReadSlots({ slots: 1, queueMax: 1, onRefuse: () => refused++ });
    const first = heldRead();
    const second = heldRead();
    const firstDone = slots.run('a', first.run);
    const secondDone = slots.run('a', second.run);
    expect(slots.admits('a')).toBe(false);
    const err = await slots.run('a', async () => 'never').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimited);
    expect((err as RateLimited).options.retryAfterSeconds).toBe(1);
    expect(() => slots.admit('a')).toThrow(RateLimited);
    expect(refused).toBe(2);
    // The next page of an admitted export or replay waits its turn instead.
    const continuing = heldRead();
    const continuingDone = slots.run('a', continuing.run, { continues: true });
    expect(slots.load('a')).toEqual({ running: 1, waiting: 2 });
    first.finish();
    await firstDone;
    second.finish();
    await secondDone;
    await turn();
    expect(continuing.started).toBe(true);
    continuing.finish();
    await continuingDone;
    // A read that throws gives its slot back.
    await expect(slots.run('a', async () => { throw new Error('boom'); })).rejects.toThrow('boom');
    expect(slots.load('a')).toEqual({ running: 0, waiting: 0 });
    expect(slots.admits('a')).toBe(true);
  });

  it('takes its bounds from documented settings, refusing values outside them', () => {
    const c = loadConfig({});
    expect([c.ORG_READ_SLOTS, c.ORG_READ_QUEUE_MAX, c.READ_PAGE_MAX_BYTES]).toEqual([2, 64, 4 * 1024 * 1024]);
    for (const [name, value] of [['ORG_READ_SLOTS', '0'], ['ORG_READ_QUEUE_MAX', '-1'], ['READ_PAGE_MAX_BYTES', '1000'], ['READ_PAGE_MAX_BYTES', 'lots']]) {
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(ConfigError);
    }
  });
});
