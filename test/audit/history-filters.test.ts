// Filters over history on both backends: time ranges answer exactly (late and out-of-order timestamps included) through
// the per-hour seq map, combined filters match a plain evaluation, and cursor paging stays exact under concurrent writes.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, toolCall, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

interface Item { seq: number; type: string; serverId: string | null; toolName: string | null; action: string | null; occurredAt: string }

// Stored in this order, so seq order differs from time order: backfills from years back, a future clock, hour edges.
const TIMES = [
  '2024-03-01T10:00:00.000Z',
  '2024-03-01T10:59:59.999Z',
  '2019-06-01T00:00:00.000Z',
  '2024-03-01T11:00:00.000Z',
  '2024-03-01T09:30:00.000Z',
  '2031-01-01T00:00:00.000Z',
  '2024-03-02T00:00:00.000Z',
  '2024-02-29T23:59:59.999Z',
  '2019-06-01T00:00:00.001Z',
  '2024-03-01T10:30:00.000Z',
];

describe.each(backendNames)('history filters (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000' }, {}, { inject: true });
  let org: TestOrg;
  let all: Item[];

  beforeAll(async () => {
    org = await createOrg(app.url);
    const other = await createOrg(app.url);
    // One request per event, so the rows of one hour arrive in different statements (the map merges them).
    for (let i = 0; i < 40; i++) {
      const e = toolCall(i, { timestamp: TIMES[i % TIMES.length], serverId: `srv-${i % 3}`, toolName: i % 7 === 0 ? 'rare' : 'common', action: i % 5 === 0 ? 'deny' : 'allow' });
      expect((await postEvents(app.url, org.key, [e])).status).toBe(200);
    }
    await postEvents(app.url, other.key, TIMES.map((t, i) => toolCall(100 + i, { timestamp: t })));
    all = (await get('?limit=1000&order=asc')).body.items;
    expect(all).toHaveLength(40);
  });

  const get = (q: string) => http(`${app.url}/api/v1/audit-events${q}`, { headers: bearer(org.key) });

  const ranges: [string | undefined, string | undefined][] = [
    ['2024-03-01T10:00:00.000Z', '2024-03-01T11:00:00.000Z'],
    ['2024-03-01T10:59:59.999Z', '2024-03-01T11:00:00.001Z'],
    ['2019-01-01T00:00:00.000Z', '2024-03-01T00:00:00.000Z'],
    ['2024-03-01T00:00:00.000Z', undefined],
    [undefined, '2024-03-01T10:00:00.000Z'],
    ['2019-06-01T00:00:00.001Z', '2019-06-01T00:00:00.002Z'],
    ['2025-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z'],
  ];

  it('answers every time range exactly, in seq order both ways, alone and with other filters', async () => {
    for (const [from, to] of ranges) {
      for (const extra of ['', '&toolName=rare', '&action=deny', '&serverId=srv-1&action=deny', '&toolName=rare&action=deny']) {
        const expected = all.filter((e) => (!from || e.occurredAt >= from) && (!to || e.occurredAt < to))
          .filter((e) => !extra.includes('rare') || e.toolName === 'rare')
          .filter((e) => !extra.includes('deny') || e.action === 'deny')
          .filter((e) => !extra.includes('srv-1') || e.serverId === 'srv-1')
          .map((e) => e.seq);
        const q = `${from ? `&from=${from}` : ''}${to ? `&to=${to}` : ''}${extra}`;
        const asc = (await get(`?limit=1000&order=asc${q}`)).body.items.map((e: Item) => e.seq);
        const desc = (await get(`?limit=1000${q}`)).body.items.map((e: Item) => e.seq);
        expect({ q, asc }).toEqual({ q, asc: expected });
        expect({ q, desc }).toEqual({ q, desc: [...expected].reverse() });
      }
    }
  });

  it('pages by cursor without a gap or a repeat while events keep arriving', async () => {
    const before = Math.max(...all.map((e) => e.seq));
    let writing = true;
    const writer = (async () => {
      let i = 0;
      while (writing) await postEvents(app.url, org.key, [toolCall(1000 + i++, { toolName: 'rare', action: 'deny' })]);
    })();
    try {
      for (const q of ['&toolName=rare', '&action=deny', '&from=2019-01-01T00:00:00.000Z', '']) {
        const first = (await get(`?limit=3${q}`)).body;
        const seen: number[] = first.items.map((e: Item) => e.seq);
        let cursor = first.nextCursor;
        while (cursor) {
          const page = (await get(`?limit=3&cursor=${cursor}${q}`)).body;
          seen.push(...page.items.map((e: Item) => e.seq));
          cursor = page.nextCursor;
        }
        // Newest first from the first page's newest: every older matching event exactly once, in order.
        const top = seen[0];
        const now = (await get(`?limit=1000&order=asc${q}`)).body.items.map((e: Item) => e.seq).filter((s: number) => s <= top);
        expect(seen).toEqual([...now].reverse());
        expect(top).toBeGreaterThanOrEqual(q === '&toolName=rare' || q === '&action=deny' ? 1 : before);
      }
    } finally {
      writing = false;
      await writer;
    }
  });
});
