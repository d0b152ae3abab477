// A lease row in Postgres so that one instance at a time runs a scheduled job: taken when free or expired, renewed while
// working, released when done. Times are Postgres' own clock, so instances' clocks do not matter.
import type { Queryable } from '../db/db.js';

export interface JobLease {
  /** Takes the lease if nobody holds it (or the holder's lease expired); true when this holder has it now. */
  acquire(): Promise<boolean>;
  /** Extends the lease; false when it was lost (expired and taken by another), then the holder must stop. */
  renew(): Promise<boolean>;
  release(): Promise<void>;
  /** A condition (SQL) true only while this holder's lease is valid: statements that must not run after losing it. */
  heldSql(nameParam: string, holderParam: string): string;
}

export function createJobLease(db: Queryable, name: string, holder: string, ttlMs: number): JobLease {
  const ttl = `${Math.max(1, Math.floor(ttlMs))} milliseconds`;
  return {
    async acquire() {
      const r = await db.query(
        `INSERT INTO job_leases (name, holder, expires_at) VALUES ($1, $2, now() + $3::interval)
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
         WHERE job_leases.expires_at < now() OR job_leases.holder = excluded.holder
         RETURNING holder`,
        [name, holder, ttl],
      );
      return r.rows.length === 1;
    },
    async renew() {
      const r = await db.query(
        `UPDATE job_leases SET expires_at = now() + $3::interval WHERE name = $1 AND holder = $2 AND expires_at >= now() RETURNING holder`,
        [name, holder, ttl],
      );
      return r.rows.length === 1;
    },
    async release() {
      await db.query(`UPDATE job_leases SET expires_at = now() - interval '1 millisecond' WHERE name = $1 AND holder = $2`, [name, holder]);
    },
    heldSql(nameParam, holderParam) {
      return `EXISTS (SELECT 1 FROM job_leases WHERE name = ${nameParam} AND holder = ${holderParam} AND expires_at >= now())`;
    },
  };
}
