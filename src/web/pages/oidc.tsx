// Sign-in with the identity provider ([auth.oidc]): the start (to the provider, PKCE + state + nonce) and the callback.
import type { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { AppServices } from '../../http/context';
import { oidcProviderFor, oidcLogoutUrl } from '../../features/directory/oidc.service';
import { ProviderUnavailableError, type OidcProvider } from '../../features/directory/directory.oidc';
import { render } from '../render';
import { loginWithOidc, oidcThrottleName } from '../session/oidc-login.service';
import { OidcPending, PENDING_TTL_MS } from '../session/oidc-pending';
import { SESSION_COOKIE } from '../session/sessions.service';
import type { LoginThrottle } from '../session/throttle';
import type { WebContext, WebEnv } from '../web-context';
import { clientAddress, safeNext, secureCookies } from './auth';

const PENDING_COOKIE = 'confvault_oidc';
const PENDING_PATH = '/login/oidc';

/** The OIDC door of this web interface, or null when [auth.oidc] has no issuer. */
export interface OidcDoor {
  name: string;
  provider: OidcProvider;
  pending: OidcPending;
  /** The provider's logout address for a user signing out (null: none, or not an OIDC user). */
  logoutUrl(userId: number): Promise<string | null>;
}

export function createOidcDoor(app: AppServices): OidcDoor | null {
  const cfg = app.config.auth.oidc;
  if (!cfg.issuer) return null;
  const provider = oidcProviderFor(app.db, app.secrets, cfg);
  return { name: cfg.name, provider, pending: new OidcPending(), logoutUrl: (userId) => oidcLogoutUrl(app.db, app.secrets, provider, userId) };
}

function problemPage(c: WebContext, status: number, message: string) {
  return render(
    c,
    { title: 'Log in', status },
    <section class="card narrow">
      <h1>Log in</h1>
      <p class="flash error" role="alert">
        {message}
      </p>
      <p>
        <a href="/login">Back to the sign-in page</a>
      </p>
    </section>,
  );
}

const MESSAGES = {
  bad: 'The sign-in with the identity provider failed or expired. Start again from the sign-in page.',
  disabled: 'This account is disabled. Ask an administrator to enable it.',
  refused: 'Your account at the identity provider is not in any group that gives access to confvault.',
  unavailable: 'The identity provider cannot be reached, so single sign-on is not possible now. Local accounts still can sign in.',
} as const;

function tooMany(c: WebContext, waitMs: number) {
  const seconds = Math.ceil(waitMs / 1000);
  c.header('Retry-After', String(seconds));
  return problemPage(c, 429, `Too many failed attempts. Try again in ${seconds} seconds.`);
}

export function registerOidc(web: Hono<WebEnv>, throttle: LoginThrottle, door: OidcDoor): void {
  web.get('/login/oidc', async (c) => {
    const address = clientAddress(c);
    const wait = throttle.retryAfter(oidcThrottleName(address), address);
    if (wait > 0) return tooMany(c, wait);
    let started;
    try {
      started = await door.provider.startSignIn();
    } catch (err) {
      if (!(err instanceof ProviderUnavailableError)) throw err;
      c.get('app').log.warn({ error: err.message }, 'OIDC sign-in: the identity provider cannot be reached');
      return problemPage(c, 503, MESSAGES.unavailable);
    }
    const ref = door.pending.put(started.pending, safeNext(c.req.query('next')));
    // Lax: the provider sends the browser back with a top-level GET from its own site.
    setCookie(c, PENDING_COOKIE, ref, { path: PENDING_PATH, httpOnly: true, sameSite: 'Lax', secure: secureCookies(c), maxAge: PENDING_TTL_MS / 1000 });
    return c.redirect(started.url, 303);
  });

  web.get('/login/oidc/callback', async (c) => {
    const waiting = door.pending.take(getCookie(c, PENDING_COOKIE));
    deleteCookie(c, PENDING_COOKIE, { path: PENDING_PATH });
    const app = c.get('app');
    const outcome = await loginWithOidc(app.db, app.secrets, app.config.auth.oidc, door.provider, throttle, {
      query: new URL(c.req.url).search,
      pending: waiting,
      address: clientAddress(c),
      userAgent: c.req.header('User-Agent') ?? '',
      requestId: c.get('requestId'),
    });
    if (outcome.result === 'throttled') return tooMany(c, outcome.retryAfterMs);
    if (outcome.result === 'ok') {
      setCookie(c, SESSION_COOKIE, outcome.cookie, { path: '/', httpOnly: true, sameSite: 'Lax', secure: secureCookies(c) });
      return c.redirect(waiting?.next ?? '/', 303);
    }
    const status = { bad: 401, disabled: 403, refused: 403, unavailable: 503 }[outcome.result];
    return problemPage(c, status, MESSAGES[outcome.result]);
  });
}
