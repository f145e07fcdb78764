import { render } from 'preact';
import { useCallback, useContext, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { AdminNav, adminPageAt } from './admin-pages.js';
import { api, get, ME_PATH, whenForbidden, whenUnauthorized } from './api.js';
import {
  html,
  type Live,
  LiveContext,
  messageOf,
  type Navigate,
  Notice,
  type Session,
  SessionContext,
} from './kit.js';
import { IncompleteLinkPage, InvitePage, SetPasswordPage } from './pages/accounts.js';
import { EventLogPage } from './pages/event-log.js';
import { FlagListPage } from './pages/flag-list.js';
import { FlagPage } from './pages/flag-page.js';
import { ImportExportPage } from './pages/import-export.js';
import { InsightsPage } from './pages/insights.js';
import { SignInOptions } from './pages/sign-in-options.js';
import { keptSession, sessionOf, useSessionRefresh } from './session.js';
import type { Me } from './types.js';

/**
 * One EventSource for the page; listeners come and go with the pages. `recheck` hears of each
 * time the stream ends (the server ends it when the session ends or the user's role changes) and
 * opens again (a change while it was closed ended nothing).
 */
function useLive(enabled: boolean, recheck: () => void): Live {
  const listeners = useMemo(() => new Set<(features: readonly string[]) => void>(), []);
  const latestRecheck = useRef(recheck);
  latestRecheck.current = recheck;
  useEffect(() => {
    if (!enabled) return;
    const source = new EventSource('/api/admin/events/stream');
    source.addEventListener('changed', (event) => {
      const { features } = JSON.parse((event as MessageEvent<string>).data) as {
        features: string[];
      };
      for (const listener of listeners) listener(features);
    });
    // The browser opens it again by itself, unless the server refuses (a 401 when the session
    // ended). Either way, asking who is signed in shows the login page or the new role at once,
    // without waiting for the next click.
    source.addEventListener('error', () => latestRecheck.current());
    let opened = false;
    source.addEventListener('open', () => {
      if (opened) latestRecheck.current();
      opened = true;
    });
    return () => source.close();
  }, [enabled, listeners]);
  return useMemo(
    () => ({
      subscribe(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    }),
    [listeners],
  );
}

function usePath(): [string, Navigate] {
  const [path, setPath] = useState(location.pathname + location.search);
  const navigate = useCallback<Navigate>((to, options) => {
    if (options?.replace) {
      history.replaceState(null, '', to);
    } else {
      history.pushState(null, '', to);
      window.scrollTo(0, 0);
    }
    setPath(to);
  }, []);
  useEffect(() => {
    const onPop = () => setPath(location.pathname + location.search);
    // Same-origin links move within the page instead of reloading it.
    const onClick = (event: MouseEvent) => {
      if (event.defaultPrevented || event.button !== 0) return;
      if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      const link = (event.target as Element).closest?.('a[href]') as HTMLAnchorElement | null;
      if (!link || link.origin !== location.origin || link.dataset.external !== undefined) return;
      event.preventDefault();
      navigate(link.pathname + link.search);
    };
    window.addEventListener('popstate', onPop);
    document.addEventListener('click', onClick);
    return () => {
      window.removeEventListener('popstate', onPop);
      document.removeEventListener('click', onClick);
    };
  }, [navigate]);
  return [path, navigate];
}

/** Where a session ended (sessionStorage): the address shown again once signed in. */
const RETURN_TO = 'flags.returnTo';

/** After a signup that opened no session (its e-mail or user name may have an account). */
const NOT_SIGNED_UP =
  'No account was opened in this browser: this e-mail or user name may have an account already. If it is yours, log in with its password (nothing about it changed); if not, open the invite link again and choose another user name, or none.';

function LoginPage(props: { onLoggedIn: () => void; signedOut: boolean; notice?: string }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    try {
      await api('POST', '/auth/simple/login', {
        username: String(form.get('username') ?? ''),
        password: String(form.get('password') ?? ''),
      });
      props.onLoggedIn();
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  return html`<main class="login">
    <form class="card" onSubmit=${submit} aria-labelledby="login-title">
      <h1 id="login-title">flags</h1>
      ${props.signedOut ? html`<p class="notice" role="status">You are signed out.</p>` : null}
      ${props.notice ? html`<p class="notice" role="status">${props.notice}</p>` : null}
      <${SignInOptions} />
      <label>User name <input name="username" autocomplete="username" required autofocus /></label>
      <label>Password <input name="password" type="password" autocomplete="current-password" required /></label>
      <${Notice} error=${error} />
      <button type="submit" disabled=${busy}>Log in</button>
    </form>
  </main>`;
}

function Layout(props: { session: Session; path: string; children: unknown }) {
  const section = props.path.split(/[/?]/)[1] ?? '';
  const link = (href: string, label: string, current: boolean) =>
    html`<a href=${href} aria-current=${current ? 'page' : undefined}>${label}</a>`;
  return html`<header class="top">
      <a class="brand" href="/">flags</a>
      <nav aria-label="Main">
        ${link('/', 'Flags', section === '' || section === 'flags')}
        ${link('/archive', 'Archive', section === 'archive')}
        ${link('/events', 'Event log', section === 'events')}
        ${link('/import-export', 'Import/export', section === 'import-export')}
        ${link('/instance-insights', 'Insights', section === 'instance-insights')}
      </nav>
      <form class="who" method="post" action="/logout">
        <span>${props.session.name} <span class="role">${props.session.role}</span></span>
        <button type="submit" class="secondary">Log out</button>
      </form>
    </header>
    <${AdminNav} session=${props.session} section=${section} />
    <main>${props.children}</main>`;
}

function Router(props: { path: string; navigate: Navigate }) {
  const session = useContext(SessionContext);
  const url = new URL(props.path, location.origin);
  const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'flags' && parts.length === 3) {
    return html`<${FlagPage} key=${parts[2]} project=${parts[1]} feature=${parts[2]}
      navigate=${props.navigate} />`;
  }
  if (parts[0] === 'archive') {
    return html`<${FlagListPage} archived=${true} search=${url.search} navigate=${props.navigate} />`;
  }
  const admin = adminPageAt(session, parts[0]);
  if (admin) return admin;
  if (parts[0] === 'events') {
    return html`<${EventLogPage} search=${url.search} navigate=${props.navigate} />`;
  }
  if (parts[0] === 'import-export') return html`<${ImportExportPage} />`;
  if (parts[0] === 'instance-insights') {
    return html`<${InsightsPage} search=${url.search} navigate=${props.navigate} />`;
  }
  return html`<${FlagListPage} archived=${false} search=${url.search} navigate=${props.navigate} />`;
}

function App() {
  const [path, navigate] = usePath();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<string>();
  const load = useCallback(() => {
    get<Me>(ME_PATH).then(
      (me) => {
        setSession(sessionOf(me));
        // Back where the session ended, also after a sign-in that left the page (single sign-on).
        const back = sessionStorage.getItem(RETURN_TO);
        sessionStorage.removeItem(RETURN_TO);
        if (back?.startsWith('/') && back !== location.pathname + location.search) {
          navigate(back, { replace: true });
        }
      },
      (failure: unknown) => {
        if ((failure as { status?: number }).status === 401) setSession(null);
        else setError(messageOf(failure));
      },
    );
  }, [navigate]);
  useEffect(load, [load]);
  // A session that ends while a page is open (expired, ended elsewhere, user deleted): the login
  // page, at the same address, so that logging in again goes on where the person was.
  const signedIn = useRef(false);
  signedIn.current = Boolean(session);
  useEffect(
    () =>
      whenUnauthorized(() => {
        if (!signedIn.current) return;
        sessionStorage.setItem(RETURN_TO, location.pathname + location.search);
        setNotice('Your session ended. Log in to go on where you were.');
        setSession(null);
      }),
    [],
  );
  // A role changed while the page is open (the server refuses a write with 403, or ends the
  // admin stream): the header and every control follow the new one, without a reload.
  const refresh = useSessionRefresh((next) => {
    if (signedIn.current) setSession((current) => (current ? keptSession(current, next) : current));
  });
  useEffect(
    () =>
      whenForbidden(() => {
        if (signedIn.current) refresh();
      }),
    [refresh],
  );
  const live = useLive(Boolean(session), refresh);
  const [notice, setNotice] = useState<string>();
  /** The login page, with `text` on it (the pages a link opens end there or signed in). */
  const toLogin = (text: string) => {
    setNotice(text);
    setSession(null);
    navigate('/');
  };
  const url = new URL(path, location.origin);
  const invite = url.searchParams.get('invite');
  const token = url.searchParams.get('token');
  if (url.pathname === '/new-user' && invite !== null) {
    return html`<${InvitePage} key=${invite} secret=${invite}
      onSignedUp=${(email: string) =>
        get<Me>(ME_PATH).then(
          (me) => {
            // A session this browser had before is no sign of a new account: only its own is.
            if (me.user.email?.toLowerCase() !== email.toLowerCase()) return toLogin(NOT_SIGNED_UP);
            setNotice(undefined);
            setSession(sessionOf(me));
            navigate('/');
          },
          () => toLogin(NOT_SIGNED_UP),
        )} />`;
  }
  if ((url.pathname === '/new-user' || url.pathname === '/reset-password') && token !== null) {
    return html`<${SetPasswordPage} key=${token} token=${token}
      welcome=${url.pathname === '/new-user'}
      onPasswordSet=${() => toLogin('Your password is set; log in.')} />`;
  }
  if (url.pathname === '/new-user' || url.pathname === '/reset-password') {
    return html`<${IncompleteLinkPage} />`;
  }
  if (error) return html`<main><${Notice} error=${error} /></main>`;
  if (session === undefined) return html`<main><p role="status">Loading…</p></main>`;
  if (session === null) {
    return html`<${LoginPage} signedOut=${path.startsWith('/signed-out')} notice=${notice}
      onLoggedIn=${() => {
        setNotice(undefined);
        if (path.startsWith('/signed-out')) navigate('/');
        load();
      }} />`;
  }
  return html`<${SessionContext.Provider} value=${session}>
    <${LiveContext.Provider} value=${live}>
      <${Layout} session=${session} path=${path}>
        <${Router} path=${path.startsWith('/signed-out') ? '/' : path} navigate=${navigate} />
      <//>
    <//>
  <//>`;
}

render(html`<${App} />`, document.getElementById('app')!);
