// What bounds the rows made ahead of a write's turn: the queue counts the events of an organization's lane (running and
// waiting), and prepareEvents makes rows only when asked. Pure: no database.
import { describe, expect, it } from 'vitest';
import { createOrgWriteQueue, type MemberOutcome } from '../../src/audit/org-write-queue.js';
import { prepareEvents } from '../../src/audit/grouped-store.js';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';

const call = (i: number): NewAuditEvent => ({ type: 'tool_call', source: 'raw', occurredAt: new Date(0), toolName: `t${i}`, dedupeKey: `raw:${i}` });

describe('rows made ahead of the turn', () => {
  it('counts the events of the groupable writes in a lane, running and waiting, until each is answered', async () => {
    const groups: number[][] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const queue = createOrgWriteQueue<number, number>({
      maxWaiting: 10,
      maxGroupEvents: 1_000,
      async runGroup(_org, jobs): Promise<MemberOutcome<number>[]> {
        groups.push(jobs);
        await held;
        return jobs.map((j) => ({ ok: true, value: j }));
      },
    });
    expect(queue.events('o')).toBe(0);
    const solo = queue.run('o', async () => 0); // a write that runs alone counts no events
    const writes = [queue.join('o', 1, 300), queue.join('o', 2, 200), queue.join('o', 3, 50)];
    expect(queue.events('o')).toBe(550);
    expect(queue.events('other')).toBe(0);
    await solo;
    release();
    expect(await Promise.all(writes)).toEqual([1, 2, 3]);
    expect(groups).toEqual([[1, 2, 3]]);
    expect(queue.events('o')).toBe(0);
  });

  it('makes the rows of the events to store only when asked', () => {
    const events = [call(1), call(2), call(1)]; // the third repeats the first's identity
    const ahead = prepareEvents(events, true);
    expect(ahead.fresh).toHaveLength(2);
    expect([...ahead.rows.keys()]).toEqual(ahead.fresh);
    expect(JSON.parse(`{${ahead.rows.get(ahead.fresh[1])!.text}`)).toMatchObject({ tool_name: 't2', dedupe_key: 'raw:2' });
    expect(prepareEvents(events).rows.size).toBe(0);
  });
});
