// Suspending and resuming a session from any screen: a suspension asks for confirmation and a reason first, then calls the API.
import { api, type Session } from './api.js';
import { byId } from './dom.js';

export type SessionOp = 'suspend' | 'resume';

/**
 * Asks to confirm the suspension of `sessionId` in the suspend dialog; resolves with the reason given ('' for none),
 * or null when cancelled.
 */
export function confirmSuspend(sessionId: string): Promise<string | null> {
  const dialog = byId<HTMLDialogElement>('suspend-dialog');
  const form = byId<HTMLFormElement>('suspend-form');
  const reason = byId<HTMLTextAreaElement>('suspend-reason');
  byId('suspend-session-id').textContent = sessionId;
  dialog.dataset.sessionId = sessionId;
  reason.value = '';
  return new Promise((resolve) => {
    const done = (value: string | null) => {
      form.removeEventListener('submit', onSubmit);
      dialog.removeEventListener('close', onClose);
      if (dialog.open) dialog.close();
      resolve(value);
    };
    const onSubmit = (ev: SubmitEvent) => {
      ev.preventDefault();
      done((ev.submitter as HTMLButtonElement | null)?.value === 'confirm' ? reason.value.trim() : null);
    };
    const onClose = () => done(null);
    form.addEventListener('submit', onSubmit);
    dialog.addEventListener('close', onClose);
    dialog.showModal();
    reason.focus();
  });
}

/** Runs `op` on the session (a suspension once confirmed); resolves with the session as it now is, or null when cancelled. */
export async function runSessionOp(sessionId: string, op: SessionOp): Promise<Session | null> {
  if (op === 'resume') return api.resumeSession(sessionId);
  const reason = await confirmSuspend(sessionId);
  if (reason === null) return null;
  return api.suspendSession(sessionId, reason);
}
