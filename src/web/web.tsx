// The web interface: security headers, static files, login, then the session + CSRF gate in front of every page and internal /api/ route.
import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { compress } from 'hono/compress';
import { deleteCookie, getCookie } from 'hono/cookie';
import { matchedRoutes } from 'hono/route';
import { ApiError } from '../errors';
import type { AppServices } from '../http/context';
import { clientOf } from '../http/client';
import { errorResponse, toApiError } from '../http/errors';
import { registerApiKeys } from './pages/apikeys';
import { registerCollectors } from './pages/collectors';
import { registerAccount, registerAuth } from './pages/auth';
import { registerLoginCode, registerTotpAccount, totpEnrolmentRequired } from './pages/totp';
import { createOidcDoor, registerOidc } from './pages/oidc';
import { registerAudit } from './pages/audit';
import { registerDashboard } from './pages/dashboard';
import { registerDevices } from './pages/devices';
import { registerDeviceDetect } from './pages/device-detect';
import { registerDeviceImport } from './pages/devices-import';
import { registerDeviceHistory } from './pages/device-history';
import { registerInternalApi } from './pages/internal-api';
import { registerSearch } from './pages/search';
import { registerAdminPages } from './pages/admin';
import { registerNotifications } from './pages/notifications';
import { registerInventory } from './pages/inventory';
import { registerJobs } from './pages/jobs';
import { registerCompliance } from './pages/compliance';
import { registerComplianceDevice } from './pages/compliance-device';
import { registerComplianceRules } from './pages/compliance-rules';
import { render } from './render';
import { SESSION_COOKIE, resolveSession, tokensEqual } from './session/sessions.service';
import { LoginThrottle } from './session/throttle';
import { registerStatic } from './static';
import { TEMPLATE_SCHEMA_URL_PATH, registerTemplateSchema } from './pages/template-schema';
import type { WebContext, WebEnv } from './web-context';

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Paths that belong to the rest of the appliance: the web layer never touches them (no cookies, no CSP of ours). */
function isForeignPath(path: string): boolean {
  return path === '/healthz' || path === '/api/v1' || path.startsWith('/api/v1/');
}

const isApi = (c: WebContext) => c.req.path.startsWith('/api/');

/** Registered last: a page nobody answers is a 404 in the layout (title, language, menu, a link home); API paths go on to the API's own 404. */
const notFoundPage: MiddlewareHandler<WebEnv> = (c, next) =>
  isApi(c) || isForeignPath(c.req.path) ? next() : Promise.reject(new ApiError('RESOURCE_NOT_FOUND', `There is no page at ${c.req.path.slice(0, 200)}`));
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function createWeb(app: AppServices): Hono<WebEnv> {
  const web = new Hono<WebEnv>();
  const throttle = new LoginThrottle();

  web.use('*', async (c, next) => {
    if (isForeignPath(c.req.path)) return next();
    await next();
    c.res.headers.set('Content-Security-Policy', CSP);
    c.res.headers.set('X-Frame-Options', 'DENY');
    c.res.headers.set('Cross-Origin-Opener-Policy', 'same-origin');
  });

  // Form bodies are limited as the API's are (the login form is open to anyone): beyond it a 413, the rest unread.
  const limitBody = bodyLimit({
    maxSize: app.config.server.max_body_bytes,
    onError: (c) => {
      // The unread rest of the body makes the connection unusable for another request.
      c.header('Connection', 'close');
      throw new ApiError('PAYLOAD_TOO_LARGE', `Request body exceeds ${app.config.server.max_body_bytes} bytes`);
    },
  });
  // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- hono's use('*') types the input as any; bodyLimit reads only the request.
  web.use('*', (c, next) => (UNSAFE.has(c.req.method) && !isForeignPath(c.req.path) ? limitBody(c, next) : next()));

  // Pages, CSS and script go compressed (a device list is about a tenth of its size gzipped); the public API's JSON
  // keeps its own path, untouched, so its latency is what the API bench measures.
  const compressWeb = compress();
  // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- as above: use('*') types the input as any; compress reads only headers.
  web.use('*', (c, next) => (isForeignPath(c.req.path) ? next() : compressWeb(c, next)));

  registerStatic(web);
  registerTemplateSchema(web);
  // Browsers ask for it on every site; without this it would bounce through the login page.
  web.get('/favicon.ico', (c) => c.body(null, 204));
  registerAuth(web, throttle);
  registerLoginCode(web, throttle);
  const oidc = createOidcDoor(app);
  if (oidc) registerOidc(web, throttle, oidc);

  const gate: MiddlewareHandler<WebEnv> = async (c, next) => {
    if (
      isForeignPath(c.req.path) ||
      c.req.path.startsWith('/static/') ||
      c.req.path === TEMPLATE_SCHEMA_URL_PATH ||
      c.req.path === '/login' ||
      c.req.path === '/login/code' ||
      c.req.path === '/login/oidc' ||
      c.req.path === '/login/oidc/callback' ||
      c.req.path === '/favicon.ico'
    )
      return next();
    const session = resolveSession(app.db, getCookie(c, SESSION_COOKIE));
    // A path no page answers (only notFoundPage's '*' matches) is a 404 for everyone (not a detour through the login page).
    if (!session && !matchedRoutes(c).some((r) => r.method !== 'ALL' && r.path !== '/*')) return next();
    if (!session) {
      if (getCookie(c, SESSION_COOKIE)) deleteCookie(c, SESSION_COOKIE, { path: '/' });
      if (isApi(c)) throw new ApiError('UNAUTHORIZED', 'Not logged in, or the session has expired');
      if (c.req.method !== 'GET') return c.redirect('/login', 303);
      return c.redirect(`/login?next=${encodeURIComponent(c.req.path + (new URL(c.req.url).search || ''))}`, 303);
    }
    c.set('session', session);
    c.set('principal', session.principal);
    c.set('door', { kind: 'web', sessionRef: session.idHash.toString('hex').slice(0, 12) });
    c.set('timezone', session.principal.timezone || app.config.server.timezone);
    if (UNSAFE.has(c.req.method)) {
      // Same-origin check first (cheap, and it stops a request before its body is read), then the token. Under the
      // appliance's Referrer-Policy: no-referrer, browsers send "Origin: null" on form posts: that says nothing, so
      // only a named other origin, or the browser's own verdict in Sec-Fetch-Site, refuses here.
      const origin = c.req.header('Origin');
      // Behind a trusted TLS-terminating proxy the browser's origin is https while this hop is http.
      const own = `${clientOf(c, app.config.server.trusted_proxies).scheme}://${new URL(c.req.url).host}`;
      const crossOrigin = origin && origin !== 'null' && origin !== own;
      if (crossOrigin || c.req.header('Sec-Fetch-Site') === 'cross-site') throw new ApiError('PERMISSION_DENIED', 'Cross-site request refused');
      let presented = c.req.header('X-CSRF-Token');
      if (!presented) {
        const type = c.req.header('Content-Type') ?? '';
        if (/^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(type)) {
          const body = await c.req.parseBody();
          presented = typeof body._csrf === 'string' ? body._csrf : undefined;
        }
      }
      if (!tokensEqual(session.csrfToken, presented)) throw new ApiError('PERMISSION_DENIED', 'Missing or wrong CSRF token; reload the page and try again');
    }
    const passwordPaths = c.req.path === '/account/password' || c.req.path === '/logout';
    if (session.mustChangePassword && !passwordPaths) {
      if (isApi(c)) throw new ApiError('PERMISSION_DENIED', 'Change your password first');
      return c.redirect('/account/password', 303);
    }
    if (totpEnrolmentRequired(c)) {
      if (isApi(c)) throw new ApiError('PERMISSION_DENIED', 'Set up your second factor first');
      return c.redirect('/account/totp', 303);
    }
    await next();
  };
  web.use('*', gate);

  registerAccount(web, oidc ? (userId) => oidc.logoutUrl(userId) : undefined);
  registerTotpAccount(web);
  registerDashboard(web);
  registerApiKeys(web);
  registerDeviceImport(web);
  registerDevices(web);
  registerDeviceDetect(web);
  registerDeviceHistory(web);
  registerSearch(web);
  registerAdminPages(web);
  registerAudit(web);
  registerNotifications(web);
  registerInventory(web);
  registerCollectors(web);
  registerJobs(web);
  registerCompliance(web);
  registerComplianceRules(web);
  registerComplianceDevice(web);
  registerInternalApi(web);
  web.get('*', notFoundPage);

  web.onError((err, c) => {
    const e = toApiError(c as never, err);
    if (isApi(c) || isForeignPath(c.req.path)) return errorResponse(c as never, e);
    const title = e.status === 403 ? 'Not allowed' : e.status === 404 ? 'Not found' : e.status === 401 ? 'Not logged in' : 'Error';
    return render(
      c,
      { title, status: e.status },
      <section class="card narrow">
        <h1>{title}</h1>
        <p>{e.status >= 500 ? `Something went wrong (request ${c.get('requestId')}).` : e.message}</p>
        <p>
          <a href="/">Back to the start page</a>
        </p>
      </section>,
    );
  });
  return web;
}
