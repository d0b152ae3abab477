// Migrations: applied once, safe when several instances start at once, and a failing migration exits non-zero.
import { spawnSync } from 'node:child_process';
import { mkdtemp, writeFile, readdir, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPgDb } from '../../src/db/pg-db.js';
import { createPgliteDb } from '../../src/db/pglite-db.js';
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';

describe('migrations', () => {
  it('apply once on PGlite and are a no-op the second time', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'as-mig-'));
    const db = await createPgliteDb(dir);
    const first = await migrate(db);
    expect(first.length).toBeGreaterThan(0);
    expect(await migrate(db)).toEqual([]);
    await db.close();
  });

  it.runIf(realBackendAvailable)('are safe when several instances migrate at once (advisory lock)', async () => {
    const test = await createTestDatabase();
    const dbs = Array.from({ length: 4 }, () => createPgDb({ connectionString: test.url, max: 2 }));
    try {
      const results = await Promise.all(dbs.map((db) => migrate(db)));
      const all = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).length;
      expect(results.map((r) => r.length).sort()).toEqual([0, 0, 0, all]);
      const rows = await dbs[0].query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
      expect(rows.rows[0].n).toBe(all);
    } finally {
      await Promise.all(dbs.map((d) => d.close()));
      await test.drop();
    }
  });

  it('npm run migrate exits non-zero when a migration fails, and applies nothing of it', async () => {
    const migDir = await mkdtemp(path.join(tmpdir(), 'as-migdir-'));
    for (const f of await readdir(MIGRATIONS_DIR)) await copyFile(path.join(MIGRATIONS_DIR, f), path.join(migDir, f));
    await writeFile(path.join(migDir, '999_broken.sql'), 'CREATE TABLE ok_before_error (id int); SELECT * FROM no_such_table;');
    const dataDir = await mkdtemp(path.join(tmpdir(), 'as-migdata-'));
    const db = await createPgliteDb(dataDir);
    await expect(migrate(db, migDir)).rejects.toThrow(/no_such_table/);
    const t = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'ok_before_error'");
    expect(t.rows[0].n).toBe(0);
    await db.close();

    const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/migrate.ts'], { env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, encoding: 'utf8' });
    expect(res.status).not.toBe(0);
    expect(res.stderr).toContain('migration failed');
  });
});
