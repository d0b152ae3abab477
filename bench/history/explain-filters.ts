// EXPLAIN (ANALYZE, BUFFERS) of the first page of every documented audit-events filter and the stats window, through the
// service's own query builders, on a database filled by bench/sql/history-fill.sql. Prints a markdown table.
// `npm run bench -- history` measures the same probes (bench/lib/history-filters.ts) over HTTP before and after a fill.
// DATABASE_URL=postgres://postgres@127.0.0.1:5432/hist_scratch npx tsx bench/history/explain-filters.ts
import pg from 'pg';
import { explainProbe, filterValues, historyProbes, type Sql } from '../lib/history-filters.js';

const ORG = process.env.HISTORY_ORG ?? '00000000-0000-4000-8000-00000000000a';
const RUNS = Number(process.env.RUNS ?? 3);

const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
await client.connect();
const sql: Sql = async (text, params) => (await client.query(text, params)).rows as Record<string, unknown>[];
const values = await filterValues(sql, ORG);
console.log(`values: ${JSON.stringify(values)}`);
const only = process.env.ONLY ? new RegExp(process.env.ONLY) : null;
console.log('| Probe (first page, 100) | order | plan | buffers | ms (median of runs) |');
console.log('|---|---|---|---|---|');
for (const probe of historyProbes(values)) {
  if (only && !only.test(probe.name)) continue;
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await explainProbe(sql, ORG, probe));
  runs.sort((a, b) => a.ms - b.ms);
  const last = runs[runs.length - 1];
  console.log(`| ${probe.name} | ${probe.query.order ?? '-'} | ${last.plan} | ${last.buffers} | ${runs[Math.floor(runs.length / 2)].ms.toFixed(1)} |`);
}
await client.end();
