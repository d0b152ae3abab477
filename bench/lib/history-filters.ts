// The documented filters of GET /api/v1/audit-events (and the dashboard's stats window) as probes: values picked from an
// organization's own events, the query string the API takes, and EXPLAIN (ANALYZE, BUFFERS) of a probe's page through
// the service's own query builders. Shared by the history scenario and bench/history/explain-filters.ts.
import { countAuditEvents, listAuditEvents, type AuditEventFilter } from '../../src/audit/audit-repo.js';
import { auditQuerySchema } from '../../src/audit/audit-routes.js';
import { readAuditStats } from '../../src/audit/audit-stats-repo.js';
import { bucketRange, type StatsWindow } from '../../src/audit/stats-windows.js';
import type { Queryable } from '../../src/db/db.js';
import { loadConfig } from '../../src/config.js';

/** The byte budget of a page as the service runs by default (READ_PAGE_MAX_BYTES). */
const PAGE_MAX_BYTES = loadConfig({}).READ_PAGE_MAX_BYTES;

/** A statement runner: rows of `sql` with `params`. */
export type Sql = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/** Values of one organization's events that the filters ask for. */
export interface FilterValues {
  /** occurred_at of the newest event (time ranges are relative to it). */
  newestMs: number;
  commonServer: string;
  rareServer: string;
  commonTool: string;
  rareTool: string;
  /** The session of the event in the middle of the organization's history. */
  session: string;
}

/** occurred_at of the organization's newest event (by seq), in ms; now when it has none. */
export async function newestOccurredMs(sql: Sql, orgId: string): Promise<number> {
  const [newest] = await sql('SELECT occurred_at FROM audit_events WHERE org_id = $1 ORDER BY seq DESC LIMIT 1', [orgId]);
  return newest ? new Date(newest.occurred_at as string).getTime() : Date.now();
}

/** Most and least frequent servers and tools of the organization, a session from the middle of its history, its newest event. */
export async function filterValues(sql: Sql, orgId: string): Promise<FilterValues> {
  const ranked = async (column: 'server_id' | 'tool_name') => {
    const rows = await sql(`SELECT ${column} AS v, count(*) AS n FROM audit_events WHERE org_id = $1 AND ${column} IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1`, [orgId]);
    return { common: String(rows[0]?.v ?? 'none'), rare: String(rows[rows.length - 1]?.v ?? 'none') };
  };
  const servers = await ranked('server_id');
  const tools = await ranked('tool_name');
  const [mid] = await sql(
    `SELECT session_id FROM audit_events WHERE org_id = $1 AND session_id IS NOT NULL
     AND seq >= (SELECT event_seq / 2 FROM organizations WHERE id = $1) ORDER BY seq LIMIT 1`,
    [orgId],
  );
  return {
    newestMs: await newestOccurredMs(sql, orgId),
    commonServer: servers.common,
    rareServer: servers.rare,
    commonTool: tools.common,
    rareTool: tools.rare,
    session: String(mid?.session_id ?? 'none'),
  };
}

/** One request shape: a filtered first page (or, with page2, the page after it through nextCursor), or the stats window. */
export interface Probe {
  name: string;
  path: '/api/v1/audit-events' | '/api/v1/audit-events/stats' | '/api/v1/audit-events/count';
  query: Record<string, string>;
  page2?: boolean;
}

const DAY = 86_400_000;
/** AUDIT_COUNT_MAX's default. */
const COUNT_MAX = 10_000;

/** Every documented filter, alone and in the combinations the dashboard and operators use, both orders; the stats windows. */
export function historyProbes(v: FilterValues): Probe[] {
  const at = (daysAgo: number) => new Date(v.newestMs - daysAgo * DAY).toISOString();
  const lists: [string, Record<string, string>, ('desc' | 'asc')[]?][] = [
    ['(none), recent', {}],
    ['type=tool_call', { type: 'tool_call' }],
    ['type=log', { type: 'log' }],
    ['type=session_update', { type: 'session_update' }],
    ['type=anomaly', { type: 'anomaly' }],
    ['serverId (common)', { serverId: v.commonServer }],
    ['serverId (rare)', { serverId: v.rareServer }],
    ['sessionId (mid-history)', { sessionId: v.session }],
    ['toolName (common)', { toolName: v.commonTool }],
    ['toolName (rare)', { toolName: v.rareTool }],
    ['action=allow', { action: 'allow' }],
    ['action=deny', { action: 'deny' }],
    ['source=datadog', { source: 'datadog' }],
    ['from/to last hour', { from: at(1 / 24), to: at(0) }],
    ['from/to 1 day, 60 days ago', { from: at(61), to: at(60) }],
    ['from/to 1 h, 60 days ago', { from: at(60 + 1 / 24), to: at(60) }],
    ['from/to 30 days, 60-30 days ago', { from: at(60), to: at(30) }],
    ['from only, 80 days ago', { from: at(80) }],
    ['to only, before 80 days ago', { to: at(80) }],
    ['toolName (rare) + action=deny', { toolName: v.rareTool, action: 'deny' }],
    ['toolName (common) + action=deny', { toolName: v.commonTool, action: 'deny' }],
    ['serverId (rare) + toolName (rare)', { serverId: v.rareServer, toolName: v.rareTool }],
    ['serverId (rare) + action=deny', { serverId: v.rareServer, action: 'deny' }],
    ['sessionId + type=tool_call', { sessionId: v.session, type: 'tool_call' }],
    ['type=tool_call + action=deny', { type: 'tool_call', action: 'deny' }],
    ['source=datadog + action=deny', { source: 'datadog', action: 'deny' }],
    ['source=datadog + toolName (rare)', { source: 'datadog', toolName: v.rareTool }],
    ['type=anomaly + serverId (common)', { type: 'anomaly', serverId: v.commonServer }],
    ['action=deny + 1 day, 60 days ago', { action: 'deny', from: at(61), to: at(60) }],
    ['toolName (rare) + 1 day, 60 days ago', { toolName: v.rareTool, from: at(61), to: at(60) }],
    ['serverId (common) + 1 day, 60 days ago', { serverId: v.commonServer, from: at(61), to: at(60) }],
    ['toolName (rare) + action=deny + source=raw', { toolName: v.rareTool, action: 'deny', source: 'raw' }],
    // The dashboard's reads: the table of recent tool calls, and one session's calls.
    ['dashboard: type=tool_call, limit 200', { type: 'tool_call', limit: '200' }, ['desc']],
    ['dashboard: type=tool_call + sessionId, limit 200', { type: 'tool_call', sessionId: v.session, limit: '200' }, ['desc']],
  ];
  const probes: Probe[] = [];
  for (const [name, query, orders = ['desc', 'asc']] of lists) {
    for (const order of orders) probes.push({ name, path: '/api/v1/audit-events', query: { ...query, order } });
  }
  probes.push({ name: '(none), page 2 by cursor', path: '/api/v1/audit-events', query: { order: 'desc' }, page2: true });
  probes.push({ name: 'toolName (rare), page 2 by cursor', path: '/api/v1/audit-events', query: { toolName: v.rareTool, order: 'desc' }, page2: true });
  for (const window of ['1h', '24h']) probes.push({ name: `stats window=${window}`, path: '/api/v1/audit-events/stats', query: { window } });
  // Free text (not indexed: a scan of its time range, at most SEARCH_MAX_RANGE_HOURS) and counts (up to AUDIT_COUNT_MAX).
  const lastHour = { from: at(1 / 24), to: at(0) };
  const lastDay = { from: at(1), to: at(0) };
  probes.push({ name: 'q: a common word, last hour', path: '/api/v1/audit-events', query: { q: 'tool', ...lastHour, order: 'desc' } });
  probes.push({ name: 'q: a rare tool name, last 24 h', path: '/api/v1/audit-events', query: { q: v.rareTool, ...lastDay, order: 'desc' } });
  probes.push({ name: 'q: no match, last hour', path: '/api/v1/audit-events', query: { q: 'no-such-word', ...lastHour, order: 'desc' } });
  probes.push({ name: 'q: no match, last 24 h', path: '/api/v1/audit-events', query: { q: 'no-such-word', ...lastDay, order: 'desc' } });
  const counts: [string, Record<string, string>][] = [
    ['count: (none), capped', {}],
    ['count: serverId (rare)', { serverId: v.rareServer }],
    ['count: serverId (common), capped', { serverId: v.commonServer }],
    ['count: action=deny', { action: 'deny' }],
    ['count: toolName (rare) + action=deny', { toolName: v.rareTool, action: 'deny' }],
    ['count: last hour', lastHour],
    ['count: q no match, last 24 h', { q: 'no-such-word', ...lastDay }],
  ];
  for (const [name, query] of counts) probes.push({ name, path: '/api/v1/audit-events/count', query });
  return probes;
}

/** The listAuditEvents filter the route builds from a query string (cursor: before it for desc, after it for asc). */
export function listFilterOf(query: Record<string, string>): AuditEventFilter {
  const q = auditQuerySchema.parse(query);
  const cursor = q.cursor === undefined ? undefined : Number(q.cursor);
  return { ...q, afterSeq: q.order === 'asc' ? cursor : undefined, beforeSeq: q.order === 'desc' ? cursor : undefined, limit: q.limit, maxBytes: PAGE_MAX_BYTES };
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** Scans and sorts of a plan, short: `Ix` index scan, `IxB` backward, `IOS` index-only, `BmIx` bitmap; names without `audit_events_`. */
function planSummary(node: PlanNode): string {
  const out: string[] = [];
  const walk = (n: PlanNode) => {
    if (n['Index Name']) out.push(`${n['Node Type'].replace('Index Only Scan', 'IOS').replace('Index Scan Backward', 'IxB').replace('Bitmap Index Scan', 'BmIx').replace('Index Scan', 'Ix')} ${n['Index Name'].replace('audit_events_', '')}`);
    else if (n['Node Type'] === 'Seq Scan' || n['Node Type'] === 'Sort' || n['Node Type'] === 'BitmapAnd') out.push(n['Node Type']);
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(node);
  return [...new Set(out)].join(', ');
}

export interface ExplainedProbe {
  /** Execution time Postgres reports. */
  ms: number;
  /** Shared blocks hit + read. */
  buffers: number;
  plan: string;
}

/** EXPLAIN (ANALYZE, BUFFERS) of the probe's statement (the last one it runs), as the route would run it now. */
export async function explainProbe(sql: Sql, orgId: string, probe: Probe): Promise<ExplainedProbe> {
  const plain: Queryable = {
    async query<R>(text: string, params?: unknown[]) {
      const rows = await sql(text, params);
      return { rows: rows as R[], rowCount: rows.length };
    },
  };
  let captured: ExplainedProbe | null = null;
  const explaining: Queryable = {
    async query<R>(text: string, params?: unknown[]) {
      const [row] = await sql(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, params);
      const top = (row as { 'QUERY PLAN': [{ Plan: PlanNode & { 'Shared Hit Blocks': number; 'Shared Read Blocks': number }; 'Execution Time': number }] })['QUERY PLAN'][0];
      captured = { ms: top['Execution Time'], buffers: top.Plan['Shared Hit Blocks'] + top.Plan['Shared Read Blocks'], plan: planSummary(top.Plan) };
      return { rows: [] as R[], rowCount: 0 };
    },
  };
  // A time range's seq bounds are read first (audit_event_hours), plainly, so the statement explained is the probe's own
  // query with the real bounds (explained, the bounds query would answer no rows and the probe would stop there).
  const boundsPlain: Queryable = { query: (text, params) => (/FROM audit_event_hours/.test(text) ? plain.query(text, params) : explaining.query(text, params)) };
  if (probe.path === '/api/v1/audit-events/stats') {
    await readAuditStats(explaining, orgId, bucketRange(probe.query.window as StatsWindow, Date.now())).catch(() => undefined);
  } else if (probe.path === '/api/v1/audit-events/count') {
    const { order: _o, limit: _l, ...filter } = listFilterOf(probe.query);
    await countAuditEvents(boundsPlain, orgId, filter, COUNT_MAX).catch(() => undefined);
  } else {
    let query = probe.query;
    if (probe.page2) {
      const first = (await listAuditEvents(plain, orgId, listFilterOf(query))).rows;
      if (first.length) query = { ...query, cursor: String(first[first.length - 1].seq) };
    }
    await listAuditEvents(boundsPlain, orgId, listFilterOf(query)).catch(() => undefined);
  }
  if (!captured) throw new Error(`${probe.name}: no statement ran`);
  return captured;
}
