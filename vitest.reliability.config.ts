// Reliability suite (npm run test:reliability): fault injection, fuzzing, security and load against real Postgres and Redis.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts'],
    globalSetup: ['./test/reliability/global-setup.ts'],
    // Each file in its own process: faults, killed children and 2,000 sockets stay out of the other files' way.
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    testTimeout: 180_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
    reporters: ['default'],
  },
});
