// The sign-in form: posts the credentials and explains failures (wrong password, rate limit, service down) in #login-error.
import { api, ApiError, type Me } from './api.js';
import { byId, onSubmit } from './dom.js';

function explain(err: unknown): string {
  if (!(err instanceof ApiError)) return 'Sign-in failed.';
  switch (err.status) {
    case 0:
      return 'The service cannot be reached. Check your connection and try again.';
    case 400:
      return `Check the email and password: ${err.message}`;
    case 401:
      return 'Wrong email or password.';
    case 429:
      return err.retryAfterSeconds
        ? `Too many sign-in attempts. Try again in ${err.retryAfterSeconds} s.`
        : 'Too many sign-in attempts. Try again later.';
    default:
      return `Sign-in failed: ${err.message}`;
  }
}

export class LoginForm {
  private readonly form = byId<HTMLFormElement>('login-form');
  private readonly email = byId<HTMLInputElement>('login-email');
  private readonly password = byId<HTMLInputElement>('login-password');
  private readonly error = byId('login-error');
  private readonly note = byId('login-note');
  private readonly submit: HTMLButtonElement;

  constructor(private readonly signedIn: (me: Me) => void) {
    const submit = this.form.querySelector<HTMLButtonElement>('button[type="submit"]');
    if (!submit) throw new Error('dashboard: #login-form has no submit button');
    this.submit = submit;
    onSubmit(this.form, () => this.send());
  }

  /** Resets the form for a fresh sign-in; `note` says why it is shown (e.g. the login expired). */
  reset(note = ''): void {
    this.password.value = '';
    this.setError('');
    this.note.textContent = note;
    this.note.hidden = !note;
    this.submit.disabled = false;
    (this.email.value ? this.password : this.email).focus();
  }

  private async send(): Promise<void> {
    const email = this.email.value.trim();
    const password = this.password.value;
    if (!email || !password) {
      this.setError('Enter your email and password.');
      return;
    }
    this.setError('');
    this.submit.disabled = true;
    try {
      const me = await api.login(email, password);
      this.password.value = '';
      this.note.hidden = true;
      this.signedIn(me);
    } catch (err) {
      this.setError(explain(err));
      this.password.select();
    } finally {
      this.submit.disabled = false;
    }
  }

  private setError(message: string): void {
    this.error.textContent = message;
    this.error.hidden = !message;
  }
}
