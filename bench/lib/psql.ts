// Runs psql (a true COPY through \copy) against a bench database.
import { spawn } from 'node:child_process';

export function psql(url: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('psql', [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', command], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`psql exited ${code}: ${err.trim()}`))));
  });
}
