#!/usr/bin/env node
// The package's command line: `audit-stream verify` proves an NDJSON export is exactly leaves a..b of an
// organization's log at a signed checkpoint (exit codes in docs/verification.md); `audit-stream keygen` makes a
// checkpoint signing key.
import { createReadStream } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { checkExport, EXIT, exportLeaves, InputError, type CheckResult } from '../verify/export-check.js';
import { generatePrivateKey, parsePrivateKey, parseVerifierKey, type NoteVerifier } from '../verify/signed-note.js';
import { directoryTiles, httpTiles } from '../verify/tile-sources.js';

const USAGE = `usage:
  audit-stream verify --export <events.ndjson|-> --checkpoint <file> --key <verifier key or file> [--key ...]
                      [--tiles <directory|https://host/api/v1/log>] [--json]
      (the API key for --tiles over HTTP is read from AUDIT_STREAM_API_KEY)
  audit-stream keygen <key name> --out <file>
exit codes: 0 verified; 1 the export differs from the log (first bad seq named); 2 bad usage or unreadable input;
            3 the checkpoint does not verify with the key; 4 the tiles do not match the checkpoint`;

async function keyOf(value: string): Promise<NoteVerifier> {
  const text = value.includes('+') ? value : await readFile(value, 'utf8');
  return parseVerifierKey(text.trim());
}

function linesOf(file: string): AsyncIterable<string> {
  return createInterface({ input: file === '-' ? process.stdin : createReadStream(file), crlfDelay: Infinity });
}

async function verify(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { export: { type: 'string' }, checkpoint: { type: 'string' }, key: { type: 'string', multiple: true }, tiles: { type: 'string' }, json: { type: 'boolean' } },
    strict: true,
  });
  if (!values.export || !values.checkpoint || !values.key?.length) throw new InputError('verify needs --export, --checkpoint and --key');
  const keys = await Promise.all(values.key.map(keyOf));
  const note = await readFile(values.checkpoint, 'utf8');
  const tiles = values.tiles ? (/^https?:\/\//.test(values.tiles) ? httpTiles(values.tiles, process.env.AUDIT_STREAM_API_KEY) : directoryTiles(values.tiles)) : null;
  const result: CheckResult = await checkExport(await exportLeaves(linesOf(values.export)), note, keys, tiles);
  if (values.json) process.stdout.write(JSON.stringify(result) + '\n');
  else process.stdout.write(`${result.exitCode === EXIT.verified ? 'verified' : 'NOT verified'}: ${result.message}\n`);
  return result.exitCode;
}

async function keygen(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: { out: { type: 'string' } }, allowPositionals: true, strict: true });
  if (positionals.length !== 1 || !values.out) throw new InputError('keygen needs a key name and --out <file>');
  const text = generatePrivateKey(positionals[0]);
  await writeFile(values.out, text + '\n', { mode: 0o600, flag: 'wx' });
  process.stdout.write(`signing key written to ${values.out}\nverifier key: ${parsePrivateKey(text).verifier.text}\n`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === 'verify') return await verify(rest);
    if (command === 'keygen') return await keygen(rest);
    process.stderr.write(`${USAGE}\n`);
    return EXIT.usage;
  } catch (err) {
    process.stderr.write(`audit-stream ${command}: ${(err as Error).message}\n${USAGE}\n`);
    return EXIT.usage;
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
