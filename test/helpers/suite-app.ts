// One backend and one app on it for all the tests of a describe: started before them, closed after (suiteApp).
import { afterAll, beforeAll } from 'vitest';
import type { BuildOptions } from '../../src/app.js';
import { makeBackend, type Backend } from './backends.js';
import { startApp, type RunningApp, type StartOptions } from './app.js';

/**
 * Called inside a describe: registers there a beforeAll that makes a backend of `backendName` and starts an app on it
 * with `env` over the backend's own env (and `opts` for buildApp; `start.inject`: served by app.inject, no socket), and an afterAll that closes the app, then cleans the
 * backend up. Hook timeouts are the configured hookTimeout.
 *
 * Returns stand-ins that read through to the live app and backend, so `const { app, backend } = suiteApp(...)` serves
 * the suite's tests and hooks; reading one before the beforeAll has run throws. The describe's own beforeAll hooks,
 * registered after this call, run after the app has started (more provisioning goes there); its own afterAll hooks run
 * before the app closes.
 */
export function suiteApp(
  backendName: Backend['name'],
  env: Record<string, string | undefined> = {},
  opts: Omit<BuildOptions, 'logStream'> = {},
  start: StartOptions = {},
): { readonly app: RunningApp; readonly backend: Backend } {
  let backend: Backend | undefined;
  let app: RunningApp | undefined;
  beforeAll(async () => {
    backend = await makeBackend(backendName);
    app = await startApp({ ...backend.env, ...env }, opts, start);
  });
  afterAll(async () => {
    await app?.close();
    await backend?.cleanup();
  });
  const live = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error(`suiteApp(${backendName}): the backend and app start in beforeAll; use them in tests and hooks`);
    return value;
  };
  return {
    app: {
      get url() {
        return live(app).url;
      },
      get ctx() {
        return live(app).ctx;
      },
      get logs() {
        return live(app).logs;
      },
      close: () => live(app).close(),
    },
    backend: {
      name: backendName,
      get env() {
        return live(backend).env;
      },
      sibling: () => live(backend).sibling(),
      cleanup: () => live(backend).cleanup(),
    },
  };
}
