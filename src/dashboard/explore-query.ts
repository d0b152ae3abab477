// The explore view's query as data: field filters, free text and a time range (a preset ending now, or absolute), read from and written to the URL.

export const FIELD_FILTERS = ['serverId', 'sessionId', 'toolName', 'action', 'source', 'type'] as const;
export type FieldFilter = (typeof FIELD_FILTERS)[number];

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Time range presets: a span ending now (null: the whole history). */
export const RANGE_PRESETS: Record<string, { label: string; spanMs: number | null }> = {
  '15m': { label: 'Last 15 minutes', spanMs: 15 * MINUTE },
  '1h': { label: 'Last hour', spanMs: HOUR },
  '6h': { label: 'Last 6 hours', spanMs: 6 * HOUR },
  '24h': { label: 'Last 24 hours', spanMs: DAY },
  '7d': { label: 'Last 7 days', spanMs: 7 * DAY },
  '30d': { label: 'Last 30 days', spanMs: 30 * DAY },
  all: { label: 'All time', spanMs: null },
};
export const DEFAULT_PRESET = '24h';

export type TimeRange = { preset: string } | { from: number; to: number };

export interface ExploreQuery {
  fields: Partial<Record<FieldFilter, string>>;
  /** Free text over the raw message and the fields (needs a range of at most a day). */
  q: string;
  range: TimeRange;
}

export const emptyQuery = (): ExploreQuery => ({ fields: {}, q: '', range: { preset: DEFAULT_PRESET } });

const parseTime = (s: string | null): number | null => {
  if (!s) return null;
  const ms = /^\d+$/.test(s) ? Number(s) : Date.parse(s);
  return Number.isFinite(ms) ? ms : null;
};

/** The query a URL's parameters describe; unknown or malformed parts fall back to the defaults. */
export function queryFromParams(p: URLSearchParams): ExploreQuery {
  const query = emptyQuery();
  for (const f of FIELD_FILTERS) {
    const v = p.get(f)?.trim();
    if (v) query.fields[f] = v;
  }
  query.q = p.get('q')?.trim() ?? '';
  const from = parseTime(p.get('from'));
  const to = parseTime(p.get('to'));
  const preset = p.get('range');
  if (from !== null && to !== null && from < to) query.range = { from, to };
  else if (preset && preset in RANGE_PRESETS) query.range = { preset };
  return query;
}

/** The URL parameters of a query (what the address bar holds: share it, reload it). */
export function paramsOfQuery(query: ExploreQuery): URLSearchParams {
  const p = new URLSearchParams();
  for (const f of FIELD_FILTERS) if (query.fields[f]) p.set(f, query.fields[f] as string);
  if (query.q) p.set('q', query.q);
  if ('preset' in query.range) p.set('range', query.range.preset);
  else {
    p.set('from', new Date(query.range.from).toISOString());
    p.set('to', new Date(query.range.to).toISOString());
  }
  return p;
}

/** The range as absolute times at `now`: from (null: the beginning) and to (null: open, up to now and on). */
export function resolveRange(range: TimeRange, now: number): { from: number | null; to: number | null } {
  if ('preset' in range) {
    const span = RANGE_PRESETS[range.preset]?.spanMs ?? null;
    return { from: span === null ? null : now - span, to: null };
  }
  return { from: range.from, to: range.to };
}

/** Whether new events can still match: the range runs up to now (a preset). */
export const isOpenEnded = (range: TimeRange): boolean => 'preset' in range;

/** Free text searches at most this span (the service's SEARCH_MAX_RANGE_HOURS default): a longer range is searched in its last day. */
export const FREE_TEXT_SPAN_MS = DAY;

/**
 * The absolute range the API is asked for at `now`. Free text needs both ends, at most FREE_TEXT_SPAN_MS apart: an open
 * range then ends a minute from now, and a longer one is cut to its last day (`narrowed`).
 */
export function apiRange(query: ExploreQuery, now: number): { from: number | null; to: number | null; narrowed: boolean } {
  let { from, to } = resolveRange(query.range, now);
  let narrowed = false;
  if (query.q) {
    to ??= now + MINUTE;
    if (from === null || to - from > FREE_TEXT_SPAN_MS) {
      from = to - FREE_TEXT_SPAN_MS;
      narrowed = true;
    }
  }
  return { from, to, narrowed };
}

/** The filter parameters of GET /api/v1/audit-events (and /count, /export) for the query at `now`. */
export function apiFilterParams(query: ExploreQuery, now: number): URLSearchParams {
  const p = new URLSearchParams();
  for (const f of FIELD_FILTERS) if (query.fields[f]) p.set(f, query.fields[f] as string);
  const { from, to } = apiRange(query, now);
  if (from !== null) p.set('from', new Date(from).toISOString());
  if (to !== null) p.set('to', new Date(to).toISOString());
  if (query.q) p.set('q', query.q);
  return p;
}

/** One line saying what the query is, e.g. "serverId=github-mcp · action=deny · Last 24 hours". */
export function describeQuery(query: ExploreQuery): string {
  const parts = FIELD_FILTERS.filter((f) => query.fields[f]).map((f) => `${f}=${query.fields[f]}`);
  if (query.q) parts.push(`"${query.q}"`);
  parts.push('preset' in query.range ? (RANGE_PRESETS[query.range.preset]?.label ?? query.range.preset) : 'custom range');
  return parts.join(' · ');
}
