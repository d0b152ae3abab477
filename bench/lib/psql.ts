// Runs psql (a true COPY through \copy, or a SQL file with variables) against a bench database.
import { spawn } from 'node:child_process';

function run(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`psql exited ${code}: ${err.trim()}`))));
  });
}

export function psql(url: string, command: string): Promise<string> {
  return run([url, '-c', command]);
}

/** `psql -v name=value ... -f file`. */
export function psqlFile(url: string, file: string, vars: Record<string, string | number> = {}): Promise<string> {
  return run([url, ...Object.entries(vars).flatMap(([k, v]) => ['-v', `${k}=${v}`]), '-f', file]);
}
