// `npm run demo`: posts a realistic mix of audit events to a running instance so every dashboard panel has data;
// with --follow it then keeps a realistic trickle going (calls, now and then a denied one, a CloudWatch line) until stopped.
// Usage: npm run demo -- --key ask_... [--url http://localhost:3000] [--follow [--rate CALLS_PER_MINUTE]]
//        (or AUDIT_STREAM_KEY / AUDIT_STREAM_URL)
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const EXAMPLES = fileURLToPath(new URL('../examples/', import.meta.url));
const MIN = 60_000;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const follow = process.argv.includes('--follow');
/** Tool calls per minute while following (--rate), on average. */
const rate = Math.max(1, Math.min(6000, Number(arg('rate') ?? 40) || 40));
const base = (arg('url') ?? process.env.AUDIT_STREAM_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
const key = arg('key') ?? process.env.AUDIT_STREAM_KEY ?? '';
const run = randomBytes(3).toString('hex');

/** Servers, their tools, and how often each action happens there. */
const SERVERS: { server: string; tools: string[]; actions: [string, number][] }[] = [
  { server: 'github-mcp', tools: ['create_issue', 'merge_pr', 'list_commits', 'read_file'], actions: [['allow', 80], ['flag', 12], ['deny', 8]] },
  { server: 'postgres-mcp', tools: ['run_query', 'describe_table', 'drop_table'], actions: [['allow', 70], ['deny', 25], ['flag', 5]] },
  { server: 'slack-mcp', tools: ['post_message', 'search_messages', 'list_channels'], actions: [['allow', 70], ['redact', 25], ['flag', 5]] },
  { server: 'browser-mcp', tools: ['fetch_url', 'screenshot', 'click'], actions: [['allow', 85], ['flag', 10], ['deny', 5]] },
  { server: 'files-mcp', tools: ['read_file', 'write_file', 'list_files'], actions: [['allow', 75], ['redact', 15], ['deny', 10]] },
];

/** Session ids as gateways and SDKs write them: UUIDs, prefixed ids and short names, of different lengths. */
const SESSIONS = [
  randomUUID(),
  randomUUID(),
  `sess_01J${randomBytes(10).toString('hex').toUpperCase()}`,
  `sess-ui-${run}-checkout`,
  `sess-ui-${run}-billing`,
  `agent-research-${run}`,
  `cron-nightly-report-${run}`,
  `sess-${run}`,
];

let seed = parseInt(run, 16);
/** Deterministic per run, so one run's mix is stable and readable. */
function rand(): number {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
}
const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
function weighted(pairs: [string, number][]): string {
  let r = rand() * pairs.reduce((n, [, w]) => n + w, 0);
  for (const [v, w] of pairs) if ((r -= w) < 0) return v;
  return pairs[0][0];
}

let n = 0;
function call(at: number, over: Record<string, unknown> = {}) {
  const s = pick(SERVERS);
  const session = SESSIONS[Math.floor(rand() ** 1.6 * SESSIONS.length)];
  return {
    id: `demo-${run}-${++n}`,
    serverId: s.server,
    sessionId: session,
    toolName: pick(s.tools),
    action: weighted(s.actions),
    latencyMs: Math.round(5 + rand() ** 3 * 900),
    timestamp: new Date(at).toISOString(),
    metadata: { demo: true },
    ...over,
  };
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path} answered ${res.status}: ${text}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

async function get(path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  if (!res.ok) throw new Error(`GET ${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/**
 * Opens the anomaly stream; resolves once it is open, with the first anomaly it will carry (null after `ms`), read from
 * the SSE frames as they come.
 */
async function watchAnomalies(ms: number): Promise<{ first: Promise<Record<string, unknown> | null> }> {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), ms);
  const res = await fetch(`${base}/api/v1/events?types=anomaly`, { headers: { authorization: `Bearer ${key}` }, signal: ctrl.signal });
  if (!res.ok || !res.body) {
    clearTimeout(timer);
    throw new Error(`the stream answered ${res.status}`);
  }
  return { first: readFirstAnomaly(res.body, ctrl, timer) };
}

async function readFirstAnomaly(body: ReadableStream<Uint8Array>, ctrl: AbortController, timer: NodeJS.Timeout): Promise<Record<string, unknown> | null> {
  try {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return null;
      buf += decoder.decode(value, { stream: true });
      const m = /^event: anomaly\ndata: (.*)$/m.exec(buf);
      if (m) return JSON.parse(m[1]) as Record<string, unknown>;
    }
  } catch (err) {
    if (ctrl.signal.aborted) return null;
    throw err;
  } finally {
    clearTimeout(timer);
    ctrl.abort();
  }
}

async function main(): Promise<void> {
  if (!/^ask_/.test(key)) {
    console.error('usage: npm run demo -- --key ask_... [--url http://localhost:3000]\n(the key `npm start` printed on first start, or any key with ingest:write, events:read and sessions:write)');
    process.exit(2);
  }
  const now = Date.now();
  console.log(`audit-stream demo → ${base} (run ${run})`);

  // 1. A day of history: more in the last hour (for the 1h view), less spread over the 23 before it (the 24h view).
  const history = [
    ...Array.from({ length: 260 }, (_, i) => call(now - 58 * MIN + (i * 57 * MIN) / 260)),
    ...Array.from({ length: 140 }, (_, i) => call(now - 24 * 60 * MIN + 10 * MIN + (i * 22.5 * 60 * MIN) / 140)),
    // Every action at least once, and one call whose action the gateway did not report.
    ...['allow', 'deny', 'redact', 'flag'].map((action, i) => call(now - (i + 1) * 1000, { action })),
    call(now - 500, { action: null, toolName: 'unknown_tool' }),
  ];
  for (let i = 0; i < history.length; i += 200) await post('/api/v1/ingest/events', history.slice(i, i + 200));
  console.log(`  ${history.length} tool calls over the last 24 h: ${SERVERS.length} servers, ${SESSIONS.length} sessions, every action`);

  // 2. The same kind of call arriving as a CloudWatch log line and as a Datadog webhook (the examples, stamped now).
  const cw = JSON.parse(await readFile(`${EXAMPLES}cloudwatch-spec.json`, 'utf8')) as { logStream: string; events: { message: string; timestamp: string }[] };
  cw.logStream = `${new Date(now).toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]demo-${run}`;
  cw.events = cw.events.map((e, i) => ({ ...e, message: e.message.replace(/^\d{4}-\d\d-\d\dT[\d:.]+Z/, new Date(now - 2000 + i).toISOString()), timestamp: new Date(now - 2000 + i).toISOString() }));
  const cwAnswer = await post('/api/v1/ingest/cloudwatch', cw);
  const dd = JSON.parse(await readFile(`${EXAMPLES}datadog-webhook.json`, 'utf8')) as Record<string, unknown>;
  const ddAnswer = await post('/api/v1/ingest/datadog', { ...dd, id: `${Date.now()}${Math.floor(rand() * 1000)}`, timestamp: new Date(now - 1500).toISOString() });
  console.log(`  CloudWatch: ${JSON.stringify(cwAnswer)}  Datadog: ${JSON.stringify(ddAnswer)}`);

  // 3. An operator suspends a session that went wrong.
  const suspect = SESSIONS[3];
  await post('/api/v1/ingest/events', [call(now - 800, { sessionId: suspect, serverId: 'postgres-mcp', toolName: 'drop_table', action: 'deny' })]);
  const res = await fetch(`${base}/api/v1/sessions/${encodeURIComponent(suspect)}/suspend`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ reason: 'demo: tried to drop a production table' }),
  });
  console.log(`  suspended session ${suspect}: ${res.status}`);

  // 4. A burst of one tool, over the organization's rate-spike threshold: the detector raises an anomaly.
  const settings = (await get('/api/v1/anomaly-settings')) as { windowSeconds: number; minRate: number; multiplier: number };
  const size = Math.min(5000, Math.max(150, Math.ceil((settings.minRate * settings.windowSeconds) / 60) + 50));
  const anomaly = (await watchAnomalies(20_000)).first;
  const t = Date.now();
  const burst = Array.from({ length: size }, (_, i) => call(t - size + i, { serverId: 'browser-mcp', toolName: 'bulk_download', action: i % 9 === 0 ? 'flag' : 'allow', sessionId: SESSIONS[i % 3] }));
  await post('/api/v1/ingest/events', burst);
  const seen = await anomaly;
  console.log(`  burst: ${size} calls of browser-mcp/bulk_download at once (threshold ${settings.minRate} calls/min over ${settings.windowSeconds} s)`);
  console.log(seen ? `  anomaly: ${seen.anomalyType} at ${seen.currentRate} calls/min vs threshold ${seen.threshold}` : '  no anomaly within 20 s (the tool alerted less than a cooldown ago?)');

  console.log(`\nOpen ${base}/ — every panel now has data (choose "Last 24 h" for the day's history).`);
  if (follow) await trickle(cw);
}

/**
 * --follow: a steady trickle, as a quiet production organization sends it: a few calls every second or two (about
 * `rate` a minute, jittered), a denied or flagged one among them as the servers' mixes say, and now and then a
 * CloudWatch line. Runs until Ctrl-C (or SIGTERM); a failed post is reported and the trickle goes on.
 */
async function trickle(cw: { logStream: string }): Promise<void> {
  let stopped = false;
  let wake: () => void = () => undefined;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      stopped = true;
      wake();
    });
  }
  const perTick = rate / 60; // calls per second
  let sent = 0;
  let lines = 0;
  let lastReport = Date.now();
  console.log(`\nFollowing: about ${rate} tool calls a minute until Ctrl-C.`);
  while (!stopped) {
    const gapMs = 500 + rand() * 1500;
    const n = Math.max(0, Math.round(perTick * (gapMs / 1000) * (0.5 + rand())));
    try {
      if (n > 0) {
        await post('/api/v1/ingest/events', Array.from({ length: n }, () => call(Date.now())));
        sent += n;
      }
      if (rand() < 0.05) {
        const s = pick(SERVERS);
        const action = weighted(s.actions) === 'deny' ? 'blocked' : 'allowed';
        const message = `tool=${pick(s.tools)} action=${action} server=${s.server} session=${pick(SESSIONS)} latency_ms=${Math.round(5 + rand() * 300)} trace_id=${randomBytes(16).toString('hex')}`;
        await post('/api/v1/ingest/cloudwatch', { logGroup: '/aws/lambda/mcp-gateway', logStream: cw.logStream, events: [{ message, timestamp: new Date().toISOString() }] });
        lines++;
      }
    } catch (err) {
      console.error(`  post failed (${err instanceof Error ? err.message : String(err)}); going on`);
    }
    if (Date.now() - lastReport >= 30_000) {
      console.log(`  ${sent} tool calls and ${lines} CloudWatch lines sent so far`);
      lastReport = Date.now();
    }
    await new Promise<void>((resolve) => {
      wake = resolve;
      setTimeout(resolve, gapMs);
    });
  }
  console.log(`Stopped: ${sent} tool calls and ${lines} CloudWatch lines sent while following.`);
}

main().catch((err) => {
  console.error(`demo failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
