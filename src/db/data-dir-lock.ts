// The embedded database's single-writer lock: one process per DATA_DIR, held by a listening Unix socket in the directory.
import { mkdir, readdir, unlink } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import path from 'node:path';

/** Exit code of a process refused because another one holds its DATA_DIR (EX_TEMPFAIL: retry once it has stopped). */
export const DATA_DIR_LOCKED_EXIT_CODE = 75;

const PREFIX = '.audit-stream-lock-';

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: string,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by another audit-stream process (${holder}). The embedded database takes one process ` +
        'at a time: stop the other process first, or start this one with another DATA_DIR (or set DATABASE_URL and ' +
        'REDIS_URL to run several instances on Postgres).',
    );
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  release(): Promise<void>;
}

/** The path a socket is bound to: relative to the working directory when that is shorter (socket paths are short). */
function bindPath(p: string): string {
  const rel = path.relative(process.cwd(), p);
  return rel.length < p.length ? `.${path.sep}${rel}` : p;
}

/** Whether a process listens on the socket: a dead one's socket refuses; a live one answers with its pid. */
function probe(socketPath: string): Promise<string | null> {
  return new Promise((resolve) => {
    const s = connect(bindPath(socketPath));
    let said = '';
    s.setTimeout(2000, () => s.destroy());
    s.on('data', (c) => (said += c.toString()));
    s.on('error', () => resolve(null));
    s.on('close', (hadError) => resolve(hadError ? null : said.trim() || 'pid unknown'));
  });
}

function listen(server: Server, p: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(bindPath(p), () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Takes the directory for this process, or throws DataDirLockedError naming the process that has it. Each process binds
 * a socket of its own in the directory, then probes every other one: a live holder answers, a dead one's socket refuses
 * and is removed. Two processes starting at once may both refuse, never both proceed; a process that died (even by
 * SIGKILL) holds nothing, since the kernel closes its socket. On Windows, a named pipe per directory does the same.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true });
  const server = createServer((s) => s.end(`pid ${process.pid}\n`));
  if (process.platform === 'win32') {
    const pipe = `\\\\.\\pipe\\audit-stream-${createHash('sha256').update(realpathSync(dataDir).toLowerCase()).digest('hex').slice(0, 32)}`;
    await listen(server, pipe).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'EADDRINUSE' ? new DataDirLockedError(dataDir, 'pipe in use') : err;
    });
    return { release: () => new Promise((r) => server.close(() => r())) };
  }
  const mine = path.join(dataDir, `${PREFIX}${process.pid}-${randomBytes(4).toString('hex')}.sock`);
  await listen(server, mine).catch((err: Error) => {
    throw new Error(`cannot lock DATA_DIR ${path.resolve(dataDir)} (${err.message}); use a shorter path on a local disk`);
  });
  server.unref();
  const release = async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await unlink(mine).catch(() => undefined);
  };
  try {
    for (const name of await readdir(dataDir)) {
      if (!name.startsWith(PREFIX) || path.join(dataDir, name) === mine) continue;
      const other = path.join(dataDir, name);
      const holder = await probe(other);
      if (holder) throw new DataDirLockedError(path.resolve(dataDir), holder);
      await unlink(other).catch(() => undefined);
    }
  } catch (err) {
    await release();
    throw err;
  }
  return { release };
}
