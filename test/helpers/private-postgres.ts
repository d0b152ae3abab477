// A private Postgres primary and its streaming replica (initdb, pg_basebackup -R) on spare ports, as the postgres user.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './private-redis.js';

const run = promisify(execFile);

/** The server binaries of the machine's Postgres (Debian's layout), or null when there are none. */
export const PG_BIN = ['/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/17/bin'].find((d) => existsSync(join(d, 'pg_basebackup'))) ?? null;

export interface PrimaryWithReplica {
  primaryUrl: string;
  replicaUrl: string;
  /** Stops applying WAL on the replica (it keeps receiving it): reads there stay as they are. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Resolves once the replica has replayed everything the primary had written when called. */
  caughtUp(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Runs a server binary as the postgres user (initdb and postgres refuse root). */
async function asPostgres(bin: string, args: string[]): Promise<void> {
  const file = join(PG_BIN!, bin);
  if (process.getuid?.() === 0) await run('runuser', ['-u', 'postgres', '--', file, ...args]);
  else await run(file, args);
}

async function query<R>(url: string, sql: string): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows as R[];
  } finally {
    await c.end();
  }
}

export async function startPrimaryWithReplica(): Promise<PrimaryWithReplica> {
  if (!PG_BIN) throw new Error('no Postgres server binaries found');
  const dir = await mkdtemp(join(tmpdir(), 'as-pg-'));
  await chmod(dir, 0o755);
  if (process.getuid?.() === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const primaryDir = join(dir, 'primary');
  const replicaDir = join(dir, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const started: string[] = [];
  const stop = async () => {
    for (const d of started.reverse()) await asPostgres('pg_ctl', ['-D', d, '-m', 'immediate', 'stop']).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await asPostgres('initdb', ['-D', primaryDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    // Settings for a small, fast test cluster; the replica copies them with the base backup.
    await appendFile(
      join(primaryDir, 'postgresql.conf'),
      `\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\nfsync = off\nfull_page_writes = off\nshared_buffers = 32MB\nmax_connections = 60\n`,
    );
    await asPostgres('pg_ctl', ['-D', primaryDir, '-l', join(dir, 'primary.log'), '-o', `-p ${primaryPort}`, '-w', 'start']);
    started.push(primaryDir);
    await asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replicaDir, '-R', '-X', 'stream', '--no-sync']);
    await asPostgres('pg_ctl', ['-D', replicaDir, '-l', join(dir, 'replica.log'), '-o', `-p ${replicaPort}`, '-w', 'start']);
    started.push(replicaDir);
  } catch (err) {
    await stop();
    throw err;
  }
  const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
  const replicaUrl = `postgres://postgres@127.0.0.1:${replicaPort}/postgres`;
  return {
    primaryUrl,
    replicaUrl,
    pauseReplay: async () => void (await query(replicaUrl, 'SELECT pg_wal_replay_pause()')),
    resumeReplay: async () => void (await query(replicaUrl, 'SELECT pg_wal_replay_resume()')),
    async caughtUp(timeoutMs = 30_000) {
      const [{ lsn }] = await query<{ lsn: string }>(primaryUrl, 'SELECT pg_current_wal_lsn()::text AS lsn');
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const [{ done }] = await query<{ done: boolean }>(replicaUrl, `SELECT pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn AS done`);
        if (done) return;
        if (Date.now() > deadline) throw new Error(`replica did not replay up to ${lsn} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    stop,
  };
}
