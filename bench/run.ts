// npm run bench: builds the service, runs the scenarios against real Postgres and Redis, prints the table and writes the results.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { nowMs } from './lib/clock.js';
import type { RunContext } from './lib/context.js';
import { cleanRedis, loadAverage, machineInfo } from './lib/machine.js';
import { dropLiveDatabases } from './lib/provision.js';
import { consoleTable, evaluateTargets, machineLine, tableRows, type BenchResults } from './lib/report.js';
import { resultsMarkdown } from './lib/results-md.js';
import { prepareServer, ROOT, TMP } from './lib/service.js';
import { runConnections } from './scenarios/connections.js';
import { runBusBackends } from './scenarios/bus-backends.js';
import { runCrossInstance } from './scenarios/cross-instance.js';
import { runFanout } from './scenarios/fanout.js';
import { runFanoutResume } from './scenarios/fanout-resume.js';
import { runHistory } from './scenarios/history.js';
import { runIngest, runIngestLog, runIngestPlain } from './scenarios/ingest.js';
import { runOtlp } from './scenarios/otlp.js';
import { runSinks } from './scenarios/sinks.js';
import { runMerkleLog } from './scenarios/merkle-log.js';
import { runPostgresCost } from './scenarios/postgres-cost.js';
import { runProxy } from './scenarios/proxy.js';
import { runRecognition } from './scenarios/recognition.js';
import { runRecognitionIngest } from './scenarios/recognition-ingest.js';

const SCENARIOS = {
  ingest: runIngest,
  ingestPlain: runIngestPlain,
  sinks: runSinks,
  merkleLog: runMerkleLog,
  ingestLog: runIngestLog,
  otlp: runOtlp,
  fanout: runFanout,
  fanoutResume: runFanoutResume,
  crossInstance: runCrossInstance,
  busBackends: runBusBackends,
  postgresCost: runPostgresCost,
  connections: runConnections,
  history: runHistory,
  proxy: runProxy,
  recognition: runRecognition,
  recognitionIngest: runRecognitionIngest,
} as const;
type Name = keyof typeof SCENARIOS;

async function main() {
  const t0 = nowMs();
  const asked = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = asked.filter((a) => !(a in SCENARIOS));
  if (unknown.length) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; choose from ${Object.keys(SCENARIOS).join(', ')}`);
  const selected = (asked.length ? asked : Object.keys(SCENARIOS)) as Name[];
  mkdirSync(TMP, { recursive: true });
  const log = (line: string) => console.log(line);

  const machine = await machineInfo();
  log('audit-stream benchmarks');
  log('building the service (npm run build)...');
  const entry = prepareServer(log);
  const ctx: RunContext = { entry, adminToken: randomBytes(24).toString('hex'), redisPrefix: `as-bench-${randomBytes(4).toString('hex')}:`, log };
  const results: BenchResults = {
    machine,
    server: { mode: entry.mode, command: `node ${entry.args.join(' ')}` },
    scenarios: {},
    timings: {},
    errors: {},
    targets: [],
    totalSeconds: 0,
  };
  log(`machine: ${machineLine(results)}`);
  // Interrupted (Ctrl-C): servers and load generators go with the process group; drop this run's databases and keys.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`\n${signal}: dropping this run's databases and Redis keys`);
      void Promise.allSettled([dropLiveDatabases(), cleanRedis(ctx.redisPrefix)]).then(() => process.exit(130));
    });
  }

  try {
    for (const name of selected) {
      const started = nowMs();
      const loadBefore = loadAverage();
      log(`\n[${name}]`);
      try {
        // Each scenario's result type is its own; the record is keyed by the same names.
        (results.scenarios as Record<Name, unknown>)[name] = await SCENARIOS[name](ctx);
      } catch (err) {
        results.errors[name] = (err as Error).stack ?? String(err);
        log(`  ${name} failed: ${(err as Error).message}`);
      }
      results.timings[name] = { seconds: (nowMs() - started) / 1000, loadBefore, loadAfter: loadAverage() };
      log(`  (${results.timings[name].seconds.toFixed(0)} s)`);
    }
  } finally {
    await cleanRedis(ctx.redisPrefix).catch(() => 0);
  }

  results.targets = evaluateTargets(results.scenarios);
  results.totalSeconds = (nowMs() - t0) / 1000;
  log('');
  log(consoleTable(tableRows(results)));
  log('');
  for (const t of results.targets) log(`${t.pass === null ? 'NOT RUN' : t.pass ? 'PASS' : 'FAIL'}  ${t.name}: ${t.value} (target ${t.target})`);

  // A partial run (some scenarios named on the command line) does not replace the committed full results.
  const full = selected.length === Object.keys(SCENARIOS).length;
  const dir = full ? path.join(ROOT, 'bench') : TMP;
  writeFileSync(path.join(dir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(path.join(dir, 'RESULTS.md'), resultsMarkdown(results));
  log(`\nwrote ${path.relative(ROOT, path.join(dir, 'results.json'))} and ${path.relative(ROOT, path.join(dir, 'RESULTS.md'))} in ${results.totalSeconds.toFixed(0)} s`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
