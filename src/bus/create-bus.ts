// Chooses the bus backend from config: Redis when REDIS_URL is set, else in-process.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Bus } from './bus.js';
import { createMemoryBus } from './memory-bus.js';
import { createRedisBus } from './redis-bus.js';

export function createBus(config: Config, logger: Logger, onReconnect?: () => void): Bus {
  if (config.REDIS_URL) return createRedisBus({ url: config.REDIS_URL, prefix: config.REDIS_PREFIX, logger, onReconnect });
  return createMemoryBus();
}
