// Entry point: reads the environment, builds the app, listens, and shuts down gracefully on SIGTERM/SIGINT.
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { DATA_DIR_LOCKED_EXIT_CODE, DataDirLockedError } from './db/data-dir-lock.js';

async function main() {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(78);
    }
    throw err;
  }
  let ctx;
  try {
    ctx = await buildApp(config);
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      console.error(`audit-stream cannot start: ${err.message}`);
      process.exit(DATA_DIR_LOCKED_EXIT_CODE);
    }
    throw err;
  }
  const { app, logger } = ctx;

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: ending streams, finishing in-flight requests');
    const force = setTimeout(() => {
      logger.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS);
    force.unref();
    try {
      await app.close();
      logger.info('shut down cleanly');
      process.exit(0);
    } catch (err) {
      logger.error({ err }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  const address = await app.listen({ host: config.HOST, port: config.PORT });
  logger.info({ address, database: ctx.db.kind, bus: ctx.bus.kind }, 'audit-stream listening');
  // Seeded only now that the server listens: a start that cannot listen (port taken) creates nothing it cannot show.
  const demo = await ctx.seedDemo();
  if (demo) {
    // Printed once, on the first start of an empty embedded database, so a new user can sign in and post at once.
    process.stdout.write(
      [
        '',
        '  Demo organization created (shown only this once):',
        `    dashboard: http://localhost:${config.PORT}/`,
        `    email:     ${demo.email}`,
        `    password:  ${demo.password}`,
        `    API key:   ${demo.apiKey}`,
        ...(ctx.verifiableLog.verifierKey ? [`    log verifier key: ${ctx.verifiableLog.verifierKey}  (audit-stream verify --key ...; docs/verification.md)`] : []),
        '',
        '',
      ].join('\n'),
    );
  }
}

main().catch((err) => {
  console.error('audit-stream failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
