// EXPLAIN (ANALYZE, BUFFERS) of the first page of every documented audit-events filter and the stats window, through the
// service's own query builders, on a database filled by bench/sql/history-fill.sql. Prints a markdown table.
// DATABASE_URL=postgres://postgres@127.0.0.1:5432/hist_scratch npx tsx bench/history/explain-filters.ts
import pg from 'pg';
import type { Queryable } from '../../src/db/db.js';
import { listAuditEvents, type AuditEventFilter } from '../../src/audit/audit-repo.js';
import { readAuditStats } from '../../src/audit/audit-stats-repo.js';
import { bucketRange } from '../../src/audit/stats-windows.js';

const ORG = process.env.HISTORY_ORG ?? '00000000-0000-4000-8000-00000000000a';
const RUNS = Number(process.env.RUNS ?? 3);

interface PlanNode { 'Node Type': string; 'Index Name'?: string; Plans?: PlanNode[] }

function planSummary(node: PlanNode): string {
  const out: string[] = [];
  const walk = (n: PlanNode) => {
    if (n['Index Name']) out.push(`${n['Node Type'].replace('Index Only Scan', 'IOS').replace('Index Scan Backward', 'IxB').replace('Index Scan', 'Ix').replace('Bitmap Index Scan', 'BmIx')} ${n['Index Name'].replace('audit_events_', '')}`);
    else if (n['Node Type'] === 'Seq Scan' || n['Node Type'] === 'Sort' || n['Node Type'] === 'BitmapAnd') out.push(n['Node Type']);
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(node);
  return [...new Set(out)].join(', ');
}

async function explain(client: pg.Client, run: (db: Queryable) => Promise<unknown>): Promise<{ ms: number; buffers: number; plan: string }> {
  let captured: { ms: number; buffers: number; plan: string } | null = null;
  const db: Queryable = {
    async query<R>(sql: string, params?: unknown[]) {
      const r = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params);
      const top = (r.rows[0] as { 'QUERY PLAN': [{ Plan: PlanNode & { 'Shared Hit Blocks': number; 'Shared Read Blocks': number }; 'Execution Time': number }] })['QUERY PLAN'][0];
      captured = { ms: top['Execution Time'], buffers: top.Plan['Shared Hit Blocks'] + top.Plan['Shared Read Blocks'], plan: planSummary(top.Plan) };
      return { rows: [] as R[], rowCount: 0 };
    },
  };
  await run(db).catch(() => undefined);
  if (!captured) throw new Error('no statement ran');
  return captured;
}

async function main() {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  const pick = async (sql: string) => (await client.query(sql, [ORG])).rows[0] as Record<string, string>;
  const { newest } = await pick(`SELECT max(occurred_at) AS newest FROM audit_events WHERE org_id = $1`);
  const end = new Date(newest).getTime();
  const day = 86_400_000;
  const { session } = await pick(`SELECT session_id AS session FROM audit_events WHERE org_id = $1 AND seq = 2500000`);
  const at = (daysAgo: number) => new Date(end - daysAgo * day);
  const filters: [string, Partial<AuditEventFilter>][] = [
    ['(none)', {}],
    ['type=tool_call', { type: 'tool_call' }],
    ['type=log', { type: 'log' }],
    ['type=session_update', { type: 'session_update' }],
    ['type=anomaly', { type: 'anomaly' }],
    ['serverId (common)', { serverId: 'mcp-server-0' }],
    ['serverId (rare)', { serverId: 'mcp-server-49' }],
    ['sessionId (mid-history)', { sessionId: session }],
    ['toolName (common)', { toolName: 'tool_0' }],
    ['toolName (rare)', { toolName: 'tool_199' }],
    ['action=allow', { action: 'allow' }],
    ['action=deny', { action: 'deny' }],
    ['source=datadog', { source: 'datadog' }],
    ['from/to last hour', { from: at(1 / 24), to: at(0) }],
    ['from/to 1 day, 60 days ago', { from: at(61), to: at(60) }],
    ['from/to 1 h, 60 days ago', { from: at(60 + 1 / 24), to: at(60) }],
    ['from/to 30 days, 60-30 days ago', { from: at(60), to: at(30) }],
    ['from only, 80 days ago', { from: at(80) }],
    ['to only, before 80 days ago', { to: at(80) }],
    ['toolName (rare) + action=deny', { toolName: 'tool_199', action: 'deny' }],
    ['toolName (common) + action=deny', { toolName: 'tool_0', action: 'deny' }],
    ['serverId (rare) + toolName (rare)', { serverId: 'mcp-server-49', toolName: 'tool_199' }],
    ['serverId (rare) + action=deny', { serverId: 'mcp-server-49', action: 'deny' }],
    ['sessionId + type=tool_call', { sessionId: session, type: 'tool_call' }],
    ['type=tool_call + action=deny', { type: 'tool_call', action: 'deny' }],
    ['source=datadog + action=deny', { source: 'datadog', action: 'deny' }],
    ['source=datadog + toolName (rare)', { source: 'datadog', toolName: 'tool_199' }],
    ['type=anomaly + serverId (common)', { type: 'anomaly', serverId: 'mcp-server-0' }],
    ['action=deny + 1 day, 60 days ago', { action: 'deny', from: at(61), to: at(60) }],
    ['toolName (rare) + 1 day, 60 days ago', { toolName: 'tool_199', from: at(61), to: at(60) }],
    ['serverId (common) + 1 day, 60 days ago', { serverId: 'mcp-server-0', from: at(61), to: at(60) }],
    ['toolName (rare) + action=deny + source=raw', { toolName: 'tool_199', action: 'deny', source: 'raw' }],
  ];
  const only = process.env.ONLY ? new RegExp(process.env.ONLY) : null;
  console.log('| Filter (first page, 100) | order | plan | buffers | ms (median of runs) |');
  console.log('|---|---|---|---|---|');
  for (const [name, f] of filters) {
    if (only && !only.test(name)) continue;
    for (const order of ['desc', 'asc'] as const) {
      const times: number[] = [];
      let last = { ms: 0, buffers: 0, plan: '' };
      for (let i = 0; i < RUNS; i++) {
        last = await explain(client, (db) => listAuditEvents(db, ORG, { order, limit: 100, ...f }));
        times.push(last.ms);
      }
      times.sort((a, b) => a - b);
      console.log(`| ${name} | ${order} | ${last.plan} | ${last.buffers} | ${times[Math.floor(times.length / 2)].toFixed(1)} |`);
    }
  }
  for (const window of ['1h', '24h'] as const) {
    if (only && !only.test(`stats ${window}`)) continue;
    const times: number[] = [];
    let last = { ms: 0, buffers: 0, plan: '' };
    for (let i = 0; i < RUNS; i++) {
      last = await explain(client, (db) => readAuditStats(db, ORG, bucketRange(window, end)));
      times.push(last.ms);
    }
    times.sort((a, b) => a - b);
    console.log(`| stats window=${window} (aggregate) | - | ${last.plan} | ${last.buffers} | ${times[Math.floor(times.length / 2)].toFixed(1)} |`);
  }
  await client.end();
}

await main();
