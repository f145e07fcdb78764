import { useEffect, useState } from 'preact/hooks';
import { get } from '../api.js';
import { html } from '../kit.js';

/** `GET /auth/login-options`: what the login page offers. */
interface LoginOptions {
  passwordLogins: boolean;
  sso: { type: string; message: string; path: string }[];
}

/**
 * The login page's single sign-on buttons ("Sign in with …"), when single sign-on is on, and a
 * word that password logins are kept for the break-glass Admin when they are off. Each button is
 * a full page load to the server, which sends the browser on to the identity provider.
 */
export function SignInOptions() {
  const [options, setOptions] = useState<LoginOptions>();
  useEffect(() => {
    get<LoginOptions>('/auth/login-options').then(setOptions, () => setOptions(undefined));
  }, []);
  if (!options || options.sso.length === 0) return null;
  return html`<div class="sso">
    ${options.sso.map(
      (option) => html`<a class="button" href=${option.path} data-external>${option.message}</a>`,
    )}
    <p class="muted">
      ${options.passwordLogins ? 'or log in with a password:' : 'Password logins are off but for the break-glass Admin:'}
    </p>
  </div>`;
}
