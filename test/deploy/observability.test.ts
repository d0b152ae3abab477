// deploy/: the Prometheus alert rules and the Grafana dashboard refer only to metrics a running instance exposes at /metrics.
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { bearer, createOrg, http, postEvents, toolCall } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';
import { suiteApp } from '../helpers/suite-app.js';

/** Series Prometheus makes itself, not the service. */
const PROMETHEUS_OWN = new Set(['up']);
/** PromQL words that look like metric names but are functions, keywords or Grafana variables. */
const NOT_METRICS = new Set(['sum', 'by', 'rate', 'increase', 'histogram_quantile', 'clamp_min', 'without', 'and', 'or', 'unless', 'on', 'le', 'label_values']);

/** The metric names in a PromQL expression: identifiers followed by `{`, `[`, or standing alone, that are not functions or labels. */
function metricNames(expr: string): string[] {
  const withoutLabels = expr.replace(/\{[^}]*\}/g, '{}').replace(/"[^"]*"/g, '""').replace(/\[[^\]]*\]/g, '[]');
  const names = new Set<string>();
  for (const m of withoutLabels.matchAll(/(?<![\w$:])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w:])(?!\s*\()/g)) {
    const name = m[1];
    if (NOT_METRICS.has(name) || /^\d/.test(name)) continue;
    // Label lists of by (...) and without (...) are not metrics.
    const before = withoutLabels.slice(0, m.index);
    if (/(by|without|on|ignoring|group_left|group_right)\s*\([^)]*$/.test(before)) continue;
    names.add(name);
  }
  return [...names];
}

/** The exposed family a series name belongs to: histograms expose name_bucket, name_sum and name_count. */
function family(name: string, exposed: Set<string>): string {
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return exposed.has(name) ? name : base;
}

describe('Prometheus rules and Grafana dashboard against /metrics', () => {
  const { app } = suiteApp('embedded');
  let exposed: Set<string>;

  beforeAll(async () => {
    // Some traffic first, so the labelled series exist as they would in production.
    const org = await createOrg(app.url);
    const stream = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    expect((await postEvents(app.url, org.key, [toolCall(1), toolCall(2)])).status).toBe(200);
    await stream.waitForCount(2);
    stream.close();
    const text = (await http(`${app.url}/metrics`)).body as string;
    exposed = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
    expect(exposed.size).toBeGreaterThan(20);
  });

  it('finds the metric names of PromQL expressions', () => {
    expect(metricNames('sum by (le, source) (rate(audit_stream_ingest_duration_seconds_bucket{job="$job", status=~"5.."}[5m])) > 2')).toEqual(['audit_stream_ingest_duration_seconds_bucket']);
    expect(metricNames('a_total / clamp_min(b_total, 1e-9)')).toEqual(['a_total', 'b_total']);
  });

  it('every alert rule is complete and names only exposed metrics', async () => {
    const doc = parse(await readFile('deploy/prometheus/audit-stream-alerts.yml', 'utf8')) as { groups: { name: string; rules: { alert: string; expr: string; labels: { severity: string }; annotations: { summary: string } }[] }[] };
    const rules = doc.groups.flatMap((g) => g.rules);
    expect(rules.length).toBeGreaterThanOrEqual(10);
    const used = new Set<string>();
    for (const r of rules) {
      expect(r.alert, JSON.stringify(r)).toMatch(/^AuditStream[A-Za-z]+$/);
      expect(['critical', 'warning', 'info']).toContain(r.labels.severity);
      expect(r.annotations.summary.length).toBeGreaterThan(10);
      for (const name of metricNames(r.expr)) {
        if (PROMETHEUS_OWN.has(name)) continue;
        expect(exposed.has(family(name, exposed)), `${r.alert}: ${name}`).toBe(true);
        used.add(family(name, exposed));
      }
    }
    // The rules watch ingest failures, storage, streams and the bus.
    for (const m of ['audit_stream_ingest_requests_total', 'audit_stream_ingest_duration_seconds', 'audit_stream_sse_streams_rejected_total', 'audit_stream_bus_reconnects_total', 'audit_stream_gap_fills_total']) expect(used).toContain(m);
  });

  it('every Grafana panel query names only exposed metrics, and every service metric is on a panel', async () => {
    const dash = JSON.parse(await readFile('deploy/grafana/audit-stream-dashboard.json', 'utf8')) as { uid: string; panels: { type: string; title: string; targets?: { expr: string }[] }[]; templating: { list: { name: string; definition?: string }[] } };
    expect(dash.uid).toBe('audit-stream');
    const exprs = [...dash.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: p.title, expr: t.expr }))), ...dash.templating.list.filter((v) => v.definition).map((v) => ({ where: `$${v.name}`, expr: (v.definition as string).replace(/^label_values\((.*), \w+\)$/, '$1') }))];
    expect(exprs.length).toBeGreaterThan(15);
    const used = new Set<string>();
    for (const { where, expr } of exprs) {
      const names = metricNames(expr);
      expect(names.length, `${where}: ${expr}`).toBeGreaterThan(0);
      for (const name of names) {
        expect(exposed.has(family(name, exposed)), `${where}: ${name}`).toBe(true);
        used.add(family(name, exposed));
      }
    }
    const own = [...exposed].filter((m) => m.startsWith('audit_stream_'));
    expect(own.filter((m) => !used.has(m))).toEqual([]);
  });
});
