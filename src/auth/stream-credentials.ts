// Re-validation of open streams' credentials: a periodic check for revoked API keys and ended logins, and the
// revocations other instances broadcast; streams whose credentials went bad are ended.
import type { Logger } from 'pino';
import type { ControlChannel } from '../bus/control-channel.js';
import type { AuthRepo } from './auth-repo.js';

/** The credentials a stream was opened with. */
export interface StreamCredentials {
  keyId: string | null;
  loginSessionId: string | null;
}

/** The open streams, as the check sees them. */
export interface CredentialHolders {
  /** The credentials of every open stream. */
  credentials(): Iterable<StreamCredentials>;
  /** Ends the streams whose credentials `bad` selects, with `why` as their last comment. */
  end(bad: (c: StreamCredentials) => boolean, why: string): void;
}

export interface StreamCredentialDeps {
  authRepo: Pick<AuthRepo, 'invalidCredentials'>;
  control: Pick<ControlChannel, 'on' | 'onResubscribed'>;
  logger: Logger;
  /** How often every open stream's credentials are checked again (AUTH_RECHECK_MS). */
  recheckMs: number;
}

/** Watches the credentials of `holders`' streams until stop(). */
export function watchStreamCredentials(deps: StreamCredentialDeps, holders: CredentialHolders): { recheck(): Promise<void>; stop(): void } {
  async function recheck(): Promise<void> {
    const keyIds = new Set<string>();
    const loginIds = new Set<string>();
    for (const c of holders.credentials()) {
      if (c.keyId) keyIds.add(c.keyId);
      if (c.loginSessionId) loginIds.add(c.loginSessionId);
    }
    if (keyIds.size === 0 && loginIds.size === 0) return;
    try {
      const bad = await deps.authRepo.invalidCredentials([...keyIds], [...loginIds]);
      if (bad.size) holders.end((c) => bad.has(c.keyId ?? '') || bad.has(c.loginSessionId ?? ''), 'credentials revoked or expired');
    } catch (err) {
      deps.logger.warn({ err: { message: (err as Error).message } }, 'credential recheck failed');
    }
  }

  let stopped = false;
  const timer = setInterval(() => void recheck(), deps.recheckMs);
  timer.unref();
  deps.control.on('revoke_key', (m) => {
    if (!stopped) holders.end((c) => c.keyId === m.keyId, 'API key revoked');
  });
  deps.control.on('end_login', (m) => {
    if (!stopped) holders.end((c) => c.loginSessionId === m.loginSessionId, 'signed out');
  });
  // Revocations broadcast while the control channel was away are lost: check every stream at once when it is back.
  deps.control.onResubscribed(() => {
    if (!stopped) void recheck();
  });

  return {
    recheck,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
