// Login (throttled, CSRF-protected by a pre-session cookie), logout, password change (forced for the first admin) and own profile.
import type { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { ApiError } from '../../errors';
import { changeOwnPassword, getUser, setUserTimezone } from '../../features/users/users.service';
import { actorOf } from '../../http/context';
import { clientOf } from '../../http/client';
import { Csrf, FieldError, FormError } from '../components/layout';
import { redirectWith, render } from '../render';
import { login, logout } from '../session/login.service';
import { SESSION_COOKIE, newToken, tokensEqual } from '../session/sessions.service';
import type { LoginThrottle } from '../session/throttle';
import { fieldErrors, formFields, type WebContext, type WebEnv } from '../web-context';
import { CHALLENGE_TTL_MS } from '../../features/users/totp-challenge.service';

const LOGIN_CSRF_COOKIE = 'confvault_login';
/** The sign-in step between a right password and its second factor (pages/totp.tsx); never a session. */
export const CHALLENGE_COOKIE = 'confvault_login_code';

/** The client's address: the TCP peer's, or the one a trusted proxy reports (server.trusted_proxies). */
export function clientAddress(c: WebContext): string {
  return clientOf(c, c.get('app').config.server.trusted_proxies).address;
}

/** Cookies are Secure when the client speaks HTTPS: to our TLS listener, or to a trusted TLS-terminating proxy. */
export function secure(c: WebContext): boolean {
  return clientOf(c, c.get('app').config.server.trusted_proxies).scheme === 'https' || Boolean(c.get('app').config.server.tls_cert);
}
export const secureCookies = secure;

/** "Sign in with <name>" on the login page when [auth.oidc] is on. */
function ssoName(c: WebContext): string | undefined {
  const oidc = c.get('app').config.auth.oidc;
  return oidc.issuer ? oidc.name : undefined;
}

/** Only same-site paths: `next` must never send the user to another host after login. */
export function safeNext(next: string | undefined): string {
  return next && /^\/(?![/\\])[\x21-\x7e]*$/.test(next) && !next.startsWith('/login') ? next : '/';
}

function LoginForm(props: { token: string; next: string; username?: string; error?: string; sso?: string }) {
  return (
    <section class="card narrow">
      <h1>Log in</h1>
      {props.error ? (
        <p class="flash error" role="alert">
          {props.error}
        </p>
      ) : null}
      <form method="post" action="/login" class="stack">
        <input type="hidden" name="_csrf" value={props.token} />
        <input type="hidden" name="next" value={props.next} />
        <label>
          Username
          <input name="username" autocomplete="username" required autofocus value={props.username ?? ''} />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <button type="submit" class="primary">
          Log in
        </button>
      </form>
      {props.sso ? (
        <p>
          <a class="button" href={`/login/oidc?next=${encodeURIComponent(props.next)}`}>
            Sign in with {props.sso}
          </a>
        </p>
      ) : null}
    </section>
  );
}

export function registerAuth(web: Hono<WebEnv>, throttle: LoginThrottle): void {
  web.get('/login', async (c) => {
    // Reused while valid: a second tab (or any request bounced here) must not invalidate the form already shown.
    const current = getCookie(c, LOGIN_CSRF_COOKIE);
    const token = current && /^[A-Za-z0-9_-]{43}$/.test(current) ? current : newToken();
    setCookie(c, LOGIN_CSRF_COOKIE, token, { path: '/login', httpOnly: true, sameSite: 'Strict', secure: secure(c), maxAge: 3600 });
    return render(c, { title: 'Log in' }, <LoginForm token={token} next={safeNext(c.req.query('next'))} sso={ssoName(c)} />);
  });

  web.post('/login', async (c) => {
    const f = await formFields(c);
    const expected = getCookie(c, LOGIN_CSRF_COOKIE);
    if (!expected || !tokensEqual(expected, f._csrf))
      throw new ApiError('PERMISSION_DENIED', 'The login form expired or came from another site; reload the page and try again');
    const username = (f.username ?? '').trim();
    const address = clientAddress(c);
    const next = safeNext(f.next);
    const again = async (error: string, status: number) => {
      const token = newToken();
      setCookie(c, LOGIN_CSRF_COOKIE, token, { path: '/login', httpOnly: true, sameSite: 'Strict', secure: secure(c), maxAge: 3600 });
      return render(c, { title: 'Log in', status }, <LoginForm token={token} next={next} username={username} error={error} sso={ssoName(c)} />);
    };
    const db = c.get('app').db;
    const outcome = await login(
      db,
      throttle,
      { username, password: f.password ?? '', address, userAgent: c.req.header('User-Agent') ?? '', requestId: c.get('requestId'), log: c.get('app').log },
      c.get('app').config.auth.ldap,
      c.get('app').config.auth,
    );
    if (outcome.result === 'throttled') {
      const seconds = Math.ceil(outcome.retryAfterMs / 1000);
      c.header('Retry-After', String(seconds));
      return again(`Too many failed attempts. Try again in ${seconds} seconds.`, 429);
    }
    if (outcome.result === 'bad') return again('Wrong username or password.', 401);
    if (outcome.result === 'disabled') return again('This account is disabled. Ask an administrator to enable it.', 403);
    if (outcome.result === 'unavailable') {
      return again('The directory cannot be reached, so directory accounts cannot sign in now. Local accounts still can.', 503);
    }
    if (outcome.result === 'refused') return again('Your directory account is not in any group that gives access to confvault.', 403);
    if (outcome.result === 'code') {
      deleteCookie(c, LOGIN_CSRF_COOKIE, { path: '/login' });
      const maxAge = CHALLENGE_TTL_MS / 1000;
      setCookie(c, CHALLENGE_COOKIE, outcome.challenge, { path: '/login', httpOnly: true, sameSite: 'Strict', secure: secure(c), maxAge });
      return c.redirect(`/login/code?next=${encodeURIComponent(next)}`, 303);
    }
    const id = outcome.cookie;
    deleteCookie(c, LOGIN_CSRF_COOKIE, { path: '/login' });
    // No maxAge: a browser session cookie; the server enforces idle and absolute expiry.
    setCookie(c, SESSION_COOKIE, id, { path: '/', httpOnly: true, sameSite: 'Lax', secure: secure(c) });
    return c.redirect(outcome.mustChangePassword ? '/account/password' : next, 303);
  });
}

/** Routes behind the session: logout and the user's own account. */
export function registerAccount(web: Hono<WebEnv>, providerLogout?: (userId: number) => Promise<string | null>): void {
  web.post('/logout', async (c) => {
    logout(c.get('app').db, actorOf(c), c.get('session').idHash);
    deleteCookie(c, SESSION_COOKIE, { path: '/' });
    // An OIDC user is signed out at the provider too, where it offers an end_session_endpoint.
    const atProvider = providerLogout ? await providerLogout(c.get('session').userId) : null;
    return c.redirect(atProvider ?? '/login', 303);
  });

  web.get('/account/password', (c) => passwordPage(c, null));
  web.post('/account/password', async (c) => {
    const f = await formFields(c);
    try {
      await changeOwnPassword(
        c.get('app').db,
        actorOf(c),
        { current: f.current ?? '', password: f.password ?? '', confirm: f.confirm ?? '' },
        c.get('session').idHash,
      );
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return passwordPage(c, errors, 422);
      throw err;
    }
    return redirectWith(c, '/', 'Your password has been changed.');
  });

  web.get('/account', (c) => accountPage(c, null));
  web.post('/account', async (c) => {
    const f = await formFields(c);
    try {
      setUserTimezone(c.get('app').db, actorOf(c), c.get('principal').username, (f.timezone ?? '').trim() || null);
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return accountPage(c, errors, 422);
      throw err;
    }
    return redirectWith(c, '/account', 'Profile saved.');
  });
}

function passwordPage(c: WebContext, errors: Record<string, string> | null, status = 200) {
  const forced = c.get('session').mustChangePassword;
  return render(
    c,
    { title: 'Change password', status },
    <section class="card narrow">
      <h1>Change password</h1>
      {forced ? (
        <p class="flash info" role="status">
          This is your first login with a generated password: choose your own password to continue.
        </p>
      ) : null}
      <FormError errors={errors} />
      <form method="post" action="/account/password" class="stack">
        <Csrf token={c.get('session').csrfToken} />
        {/* For password managers: which account the new password belongs to. */}
        <input type="text" name="username" autocomplete="username" value={c.get('principal').username} hidden readonly />
        <label>
          Current password
          <input name="current" type="password" autocomplete="current-password" required />
          <FieldError errors={errors} name="current" />
        </label>
        <label>
          New password (at least 10 characters)
          <input name="password" type="password" autocomplete="new-password" required minlength={10} />
          <FieldError errors={errors} name="password" />
        </label>
        <label>
          New password again
          <input name="confirm" type="password" autocomplete="new-password" required minlength={10} />
          <FieldError errors={errors} name="confirm" />
        </label>
        <button type="submit" class="primary">
          Change password
        </button>
      </form>
    </section>,
  );
}

function accountPage(c: WebContext, errors: Record<string, string> | null, status = 200) {
  const p = c.get('principal');
  const user = getUser(c.get('app').db, p.username);
  return render(
    c,
    { title: 'Your account', status },
    <section class="card narrow">
      <h1>Your account</h1>
      <dl class="facts">
        <dt>User</dt>
        <dd>{p.username}</dd>
        <dt>Role</dt>
        <dd>{p.roleName}</dd>
        <dt>Device groups</dt>
        <dd>{p.scope.all ? 'all' : `${p.scope.groupIds.size} group(s) and their subgroups`}</dd>
      </dl>
      <form method="post" action="/account" class="stack">
        <Csrf token={c.get('session').csrfToken} />
        <label>
          Time zone (IANA name, empty: the appliance's, {c.get('app').config.server.timezone})
          <input name="timezone" value={user?.timezone ?? ''} placeholder="Europe/Berlin" />
          <FieldError errors={errors} name="timezone" />
        </label>
        <button type="submit" class="primary">
          Save
        </button>
      </form>
      <p>
        <a href="/account/password">Change password</a>
      </p>
    </section>,
  );
}
