// Second factor pages: the code step of sign-in (/login/code), the user's own enrolment (/account/totp), and the
// gate that keeps a local user without one on the enrolment page when [auth] totp = "required".
import type { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import QRCode from 'qrcode';
import { ApiError } from '../../errors';
import { confirmTotpEnrolment, needsTotpEnrolment, startTotpEnrolment, totpStatus, type TotpStatus } from '../../features/users/totp.service';
import { challengeAlive } from '../../features/users/totp-challenge.service';
import { actorOf } from '../../http/context';
import { Csrf, FieldError, FormError } from '../components/layout';
import { redirectWith, render } from '../render';
import { loginWithCode } from '../session/login-code.service';
import { SESSION_COOKIE } from '../session/sessions.service';
import { keepForOneShow, takeShownOnce } from '../session/shown-once';
import type { LoginThrottle } from '../session/throttle';
import { fieldErrors, formFields, type WebContext, type WebEnv } from '../web-context';
import { CHALLENGE_COOKIE, clientAddress, safeNext, secure } from './auth';

function CodeForm(props: { next: string; error?: string }) {
  return (
    <section class="card narrow">
      <h1>Second factor</h1>
      {props.error ? (
        <p class="flash error" role="alert">
          {props.error}
        </p>
      ) : null}
      <form method="post" action="/login/code" class="stack">
        <input type="hidden" name="next" value={props.next} />
        <label>
          Code from your authenticator app, or one of your recovery codes
          <input name="code" autocomplete="one-time-code" required autofocus maxlength={32} spellcheck={false} />
        </label>
        <button type="submit" class="primary">
          Sign in
        </button>
      </form>
      <p>
        <a href="/login">Start again</a>
      </p>
    </section>
  );
}

export function registerLoginCode(web: Hono<WebEnv>, throttle: LoginThrottle): void {
  web.get('/login/code', (c) => {
    if (!challengeAlive(c.get('app').db, getCookie(c, CHALLENGE_COOKIE))) return c.redirect('/login', 303);
    return render(c, { title: 'Second factor' }, <CodeForm next={safeNext(c.req.query('next'))} />);
  });

  // No CSRF token here: the challenge cookie is SameSite=Strict, so a request from another site never carries it.
  web.post('/login/code', async (c) => {
    const f = await formFields(c);
    const next = safeNext(f.next);
    const app = c.get('app');
    const challenge = getCookie(c, CHALLENGE_COOKIE);
    const outcome = await loginWithCode(app.db, app.secrets, throttle, {
      challenge,
      code: f.code ?? '',
      address: clientAddress(c),
      userAgent: c.req.header('User-Agent') ?? '',
      requestId: c.get('requestId'),
    });
    const again = (error: string, status: number) => render(c, { title: 'Second factor', status }, <CodeForm next={next} error={error} />);
    if (outcome.result === 'expired') {
      deleteCookie(c, CHALLENGE_COOKIE, { path: '/login' });
      return c.redirect('/login', 303);
    }
    if (outcome.result === 'throttled') {
      const seconds = Math.ceil(outcome.retryAfterMs / 1000);
      c.header('Retry-After', String(seconds));
      return again(`Too many failed attempts. Try again in ${seconds} seconds.`, 429);
    }
    if (outcome.result === 'bad') return again('Wrong code, or a code already used.', 401);
    deleteCookie(c, CHALLENGE_COOKIE, { path: '/login' });
    if (outcome.result === 'disabled') return c.redirect('/login', 303);
    setCookie(c, SESSION_COOKIE, outcome.cookie, { path: '/', httpOnly: true, sameSite: 'Lax', secure: secure(c) });
    if (outcome.recoveryCodesLeft !== undefined) {
      const left = `You signed in with a recovery code; ${outcome.recoveryCodesLeft} left.`;
      return redirectWith(
        c,
        '/account/totp',
        outcome.recoveryCodesLeft < 3 ? `${left} Ask an administrator to reset your second factor and enrol again.` : left,
      );
    }
    return c.redirect(outcome.mustChangePassword ? '/account/password' : next, 303);
  });
}

const ENROL_PATHS = new Set(['/account/totp', '/account/totp/start', '/account/totp/confirm', '/logout', '/account/password']);

/**
 * [auth] totp = "required": a local user without a second factor reaches nothing but enrolment (and logout). Read
 * from the user's row at each request, so an administrator's reset applies to sessions already open.
 */
export function totpEnrolmentRequired(c: WebContext): boolean {
  return !ENROL_PATHS.has(c.req.path) && mustEnrol(c);
}

function mustEnrol(c: WebContext): boolean {
  const app = c.get('app');
  return app.config.auth.totp === 'required' && needsTotpEnrolment(app.db, c.get('session').userId);
}

/** The user's own second factor: enrol (QR code and text, confirmed by a first code), see the recovery codes once. */
export function registerTotpAccount(web: Hono<WebEnv>): void {
  web.get('/account/totp', async (c) => {
    const ref = c.req.query('shown');
    const codes = ref ? takeShownOnce(c.get('session').idHash, ref) : null;
    return totpPage(c, codes ? codes.split('\n') : null, null);
  });
  web.post('/account/totp/start', (c) => {
    const app = c.get('app');
    try {
      startTotpEnrolment(app.db, app.secrets, actorOf(c), app.config.auth.totp);
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) return redirectWith(c, '/account/totp', err.message, 'error');
      throw err;
    }
    return c.redirect('/account/totp', 303);
  });
  web.post('/account/totp/confirm', async (c) => {
    const app = c.get('app');
    const f = await formFields(c);
    let codes: string[];
    try {
      codes = await confirmTotpEnrolment(app.db, app.secrets, actorOf(c), f.code ?? '');
    } catch (err) {
      const errors = fieldErrors(err);
      if (errors) return totpPage(c, null, errors, err instanceof ApiError && err.code === 'CONFLICT' ? 409 : 422);
      throw err;
    }
    const ref = keepForOneShow(c.get('session').idHash, codes.join('\n'));
    return redirectWith(c, `/account/totp?shown=${ref}`, 'Second factor enrolled: from now on sign-in asks for a code.');
  });
}

async function qrImage(uri: string): Promise<string> {
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

async function totpPage(c: WebContext, recoveryCodes: string[] | null, errors: Record<string, string> | null, status = 200) {
  const app = c.get('app');
  const s: TotpStatus = totpStatus(app.db, app.secrets, c.get('session').userId);
  const csrf = c.get('session').csrfToken;
  const forced = mustEnrol(c);
  const setting = app.config.auth.totp;
  return render(
    c,
    { title: 'Second factor', status, restricted: forced || undefined },
    <section class="card narrow">
      <h1>Second factor</h1>
      {forced ? (
        <p class="flash info" role="status">
          This appliance requires a second factor: set it up to continue.
        </p>
      ) : null}
      <FormError errors={errors} />
      {recoveryCodes ? (
        <div class="flash ok" role="status">
          <p>
            <strong>Your recovery codes.</strong> Each works once, in place of a code, if you lose your phone. Keep them somewhere safe now: they are not shown
            again.
          </p>
          <pre class="recovery-codes">{recoveryCodes.join('\n')}</pre>
        </div>
      ) : null}
      {s.directory ? (
        <p>You sign in through the directory: its own second factor applies, not this one.</p>
      ) : s.enabled ? (
        <p>
          Sign-in asks for a code from your authenticator app. {s.recoveryCodesLeft} of your recovery codes are left. For a new phone, ask an administrator to
          reset your second factor, then enrol again.
        </p>
      ) : setting === 'off' ? (
        <p>The second factor is turned off on this appliance.</p>
      ) : s.pending ? (
        <>
          <p>Scan this code with your authenticator app (or type the key), then enter the code the app shows.</p>
          <img src={await qrImage(s.pending.uri)} alt="QR code of the key below, for an authenticator app" width={220} height={220} />
          <p>
            Key: <code class="totp-secret">{s.pending.secret.replace(/(.{4})/g, '$1 ').trim()}</code>
          </p>
          <form method="post" action="/account/totp/confirm" class="stack">
            <Csrf token={csrf} />
            <label>
              Code from the app
              <input name="code" autocomplete="one-time-code" inputmode="numeric" required maxlength={6} pattern="[0-9]{6}" />
              <FieldError errors={errors} name="code" />
            </label>
            <button type="submit" class="primary">
              Confirm
            </button>
          </form>
          <form method="post" action="/account/totp/start">
            <Csrf token={csrf} />
            <button type="submit">Start again with a new key</button>
          </form>
        </>
      ) : (
        <form method="post" action="/account/totp/start" class="stack">
          <Csrf token={csrf} />
          <p>Sign-in will ask for a code from an authenticator app on your phone after your password.</p>
          <button type="submit" class="primary">
            Set up a second factor
          </button>
        </form>
      )}
    </section>,
  );
}
