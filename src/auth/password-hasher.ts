// Password hashing with bounded concurrency: scrypt work never takes more than its share of the CPU and thread pool.
import pLimit from 'p-limit';
import { Unavailable } from '../shared/domain-errors.js';
import { hashPassword, verifyPassword } from './passwords.js';

export interface PasswordHasherOptions {
  /** Hashes computed at once (PASSWORD_HASH_CONCURRENCY). */
  concurrency: number;
  /** Hashes waiting at most (PASSWORD_HASH_QUEUE_MAX); more are refused with 503 and Retry-After. */
  queueMax: number;
}

export function createPasswordHasher(opts: PasswordHasherOptions) {
  const limit = pLimit(opts.concurrency);
  const run = <T>(fn: () => Promise<T>): Promise<T> => {
    if (limit.pendingCount >= opts.queueMax) {
      throw new Unavailable('too many sign-ins are being checked at the moment; retry shortly', { code: 'busy', retryAfterSeconds: 1 });
    }
    return limit(fn);
  };
  return {
    hash: (password: string) => run(() => hashPassword(password)),
    verify: (password: string, stored: string) => run(() => verifyPassword(password, stored)),
  };
}

export type PasswordHasher = ReturnType<typeof createPasswordHasher>;
