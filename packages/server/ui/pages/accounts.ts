/**
 * The pages a link opens without a session: an invite link (`/new-user?invite=…`, sign up through
 * `/invite/:token/*`), a welcome link of a user an Admin created without a password
 * (`/new-user?token=…`) and a reset link (`/reset-password?token=…`), both through `/auth/reset/*`.
 * The secret in the link is the credential; the pages only read it from the address.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, api, enc, get } from '../api.js';
import { html, messageOf, Notice } from '../kit.js';

/** The server's password rule (`createInvitedUserSchema`), checked by the browser first. */
const PASSWORD_MIN = 8;
const PASSWORD_MAX = 256;

/** unleash-server's `tokenUserSchema`: whose password a link sets. */
interface LinkUser {
  id: number;
  name?: string;
  email: string;
  role?: { name: string };
}

type Check<T> =
  | { state: 'checking' }
  | { state: 'usable'; value: T }
  | { state: 'unusable'; message: string };

/** The link's check; `explain` puts a refusal in words: what is wrong and what to do. */
function useLinkCheck<T>(
  secret: string,
  read: () => Promise<T>,
  explain: (status: number, message: string) => string,
): Check<T> {
  const [check, setCheck] = useState<Check<T>>({ state: 'checking' });
  // The link is read once per secret (the page is keyed by it too).
  useEffect(() => {
    let current = true;
    read().then(
      (value) => current && setCheck({ state: 'usable', value }),
      (failure: unknown) => {
        if (!current) return;
        const status = failure instanceof ApiFailure ? failure.status : 0;
        setCheck({ state: 'unusable', message: explain(status, messageOf(failure)) });
      },
    );
    return () => {
      current = false;
    };
  }, [secret]);
  return check;
}

/** A new password twice, with the rule told beside it. */
function NewPassword() {
  return html`<label>Password
      <input name="password" type="password" autocomplete="new-password" required
        minlength=${PASSWORD_MIN} maxlength=${PASSWORD_MAX} aria-describedby="password-rule" />
    </label>
    <p id="password-rule" class="hint">At least ${PASSWORD_MIN} characters.</p>
    <label>Confirm password
      <input name="confirm" type="password" autocomplete="new-password" required
        minlength=${PASSWORD_MIN} maxlength=${PASSWORD_MAX} />
    </label>`;
}

/** The new password of a submitted form, or why it cannot be used. */
function passwordOf(form: FormData): { password: string } | { error: string } {
  const password = String(form.get('password') ?? '');
  if (password !== String(form.get('confirm') ?? '')) {
    return { error: 'The two passwords differ: type the same password twice.' };
  }
  return { password };
}

/** The frame every link page has: a card with a heading (the form's name), centred as the login. */
function Card(props: { title: string; children: unknown; onSubmit?: (event: Event) => void }) {
  const body = html`<h1 id="account-title">${props.title}</h1>
    ${props.children}`;
  return html`<main class="login">
    ${
      props.onSubmit
        ? html`<form class="card" aria-labelledby="account-title" onSubmit=${props.onSubmit}>
            ${body}
          </form>`
        : html`<section class="card" aria-labelledby="account-title">${body}</section>`
    }
  </main>`;
}

function Unusable(props: { title: string; message: string }) {
  return html`<${Card} title=${props.title}>
    <p class="notice error" role="alert">${props.message}</p>
    <p><a href="/">Go to the login page</a></p>
  <//>`;
}

/**
 * `/new-user?invite=<secret>`: checks the link, then asks for name, e-mail, an optional user name
 * and a password. The server answers a taken e-mail the same as a new one; `onSignedUp` finds out
 * from the session whether this browser is now signed in.
 */
export function InvitePage(props: { secret: string; onSignedUp: (email: string) => void }) {
  const check = useLinkCheck(
    props.secret,
    () => get<undefined>(`/invite/${enc(props.secret)}/validate`),
    (status, message) =>
      status === 404
        ? 'This invite link is not known: check that the whole link was copied, or ask for a new one.'
        : status === 400
          ? // The server says why: expired, disabled, or an Admin link made without allowAdmin.
            `${message}${/ask/i.test(message) ? '' : ' Ask whoever sent it for a new one.'}`
          : message,
  );
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  if (check.state === 'checking') {
    return html`<${Card} title="Join flags">
      <p role="status">Checking your invite link…</p>
    <//>`;
  }
  if (check.state === 'unusable') {
    return html`<${Unusable} title="This invite link cannot be used" message=${check.message} />`;
  }
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const chosen = passwordOf(form);
    if ('error' in chosen) {
      setError(chosen.error);
      return;
    }
    const email = String(form.get('email') ?? '').trim();
    const username = String(form.get('username') ?? '').trim();
    setBusy(true);
    setError(undefined);
    try {
      await api('POST', `/invite/${enc(props.secret)}/signup`, {
        name: String(form.get('name') ?? '').trim(),
        email,
        ...(username === '' ? {} : { username }),
        password: chosen.password,
      });
      props.onSignedUp(email);
    } catch (failure) {
      setError(messageOf(failure));
      setBusy(false);
    }
  };
  return html`<${Card} title="Join flags" onSubmit=${submit}>
    <p>Create your account: you will be signed in when it is made.</p>
    <label>Name <input name="name" autocomplete="name" required maxlength="255" /></label>
    <label>E-mail <input name="email" type="email" autocomplete="email" required maxlength="255" /></label>
    <label>User name (optional)
      <input name="username" autocomplete="username" maxlength="255" aria-describedby="username-hint" />
    </label>
    <p id="username-hint" class="hint">To log in with instead of the e-mail.</p>
    <${NewPassword} />
    <${Notice} error=${error} />
    <button type="submit" disabled=${busy}>Create account</button>
  <//>`;
}

/**
 * `/new-user?token=<secret>` (welcome: a user an Admin created without a password) and
 * `/reset-password?token=<secret>` (a reset link an Admin made): sets the password of the link's
 * user; the login page comes next.
 */
export function SetPasswordPage(props: {
  token: string;
  welcome: boolean;
  onPasswordSet: () => void;
}) {
  const check = useLinkCheck<LinkUser>(
    props.token,
    () => get<LinkUser>(`/auth/reset/validate?token=${enc(props.token)}`),
    (status, message) =>
      status === 400 || status === 401 || status === 404
        ? 'This link is not known, was used already or has expired: ask an Admin for a new one.'
        : message,
  );
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const title = props.welcome ? 'Welcome to flags' : 'Set a new password';
  if (check.state === 'checking') {
    return html`<${Card} title=${title}>
      <p role="status">Checking your link…</p>
    <//>`;
  }
  if (check.state === 'unusable') {
    return html`<${Unusable} title="This link cannot be used" message=${check.message} />`;
  }
  const user = check.value;
  const submit = async (event: Event) => {
    event.preventDefault();
    const chosen = passwordOf(new FormData(event.currentTarget as HTMLFormElement));
    if ('error' in chosen) {
      setError(chosen.error);
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await api('POST', '/auth/reset/password', { token: props.token, password: chosen.password });
      props.onPasswordSet();
    } catch (failure) {
      setError(messageOf(failure));
      setBusy(false);
    }
  };
  const who = user.name ? `${user.name} (${user.email})` : user.email;
  return html`<${Card} title=${title} onSubmit=${submit}>
    <p>Choose the password of <strong>${who}</strong>${
      user.role ? html`, <span class="muted">${user.role.name}</span>` : null
    }.</p>
    <label>Account
      <input name="username" autocomplete="username" value=${user.email} readonly />
    </label>
    <${NewPassword} />
    <${Notice} error=${error} />
    <button type="submit" disabled=${busy}>Set password</button>
  <//>`;
}

/** `/new-user` or `/reset-password` without the secret: the link was cut short. */
export function IncompleteLinkPage() {
  return html`<${Unusable} title="This link is incomplete"
    message="The address has no invite or token in it: open the whole link you were sent." />`;
}
