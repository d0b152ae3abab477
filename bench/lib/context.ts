// What every scenario gets from the runner: how to start the service, the admin token, a Redis prefix and a logger.
import type { ServerEntry } from './service.js';

export interface RunContext {
  entry: ServerEntry;
  adminToken: string;
  /** Prefix of every Redis key and channel of this run; scenarios append their own name. */
  redisPrefix: string;
  log(line: string): void;
}
