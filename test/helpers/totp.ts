// TOTP in web tests: codes computed from the key a page showed, and the enrolment flow through the real pages.
import assert from 'node:assert/strict';
import { totpCode, totpStep } from '../../src/features/users/totp.code';
import type { WebClient } from '../web/web-client';

/** The code of the step `offset` steps from now (the server accepts now-1 .. now+1, each step once). */
export function codeAt(secret: string, offset: number): string {
  return totpCode(secret, totpStep() + offset);
}

/**
 * Wait (bounded, 2 s at most) until the clock is not within 2 s of a 30-second step's end, so that a test's codes
 * computed now still fall in the server's window when it checks them.
 */
export async function awayFromStepEdge(): Promise<void> {
  const left = 30_000 - (Date.now() % 30_000);
  if (left < 2_000) await new Promise((r) => setTimeout(r, left + 50));
}

/** Enrol the signed-in user: start, read the key from the page, confirm with the previous step's code. */
export async function enrol(w: WebClient, csrf: string): Promise<{ secret: string; recoveryCodes: string[] }> {
  const start = await w.post('/account/totp/start', { _csrf: csrf });
  assert.equal(start.res.status, 303);
  const page = await w.get('/account/totp');
  assert.match(page.html, /<img src="data:image\/svg\+xml;base64,/, 'the QR code is drawn by the server');
  const m = /class="totp-secret">([A-Z2-7 ]+)</.exec(page.html);
  assert.ok(m, 'the key is shown as text');
  const secret = m[1].replace(/ /g, '');
  await awayFromStepEdge();
  const confirm = await w.post('/account/totp/confirm', { _csrf: csrf, code: codeAt(secret, -1) });
  assert.equal(confirm.res.status, 303, confirm.html);
  const shown = await w.get(confirm.res.headers.get('location')!);
  const codes = /<pre class="recovery-codes">([^<]+)<\/pre>/.exec(shown.html);
  assert.ok(codes, 'the recovery codes are shown once');
  return { secret, recoveryCodes: codes[1].split('\n') };
}

/** The password step of the login form: the response (303 to /login/code when a code is owed) and its page. */
export async function passwordStep(w: WebClient, username: string, password: string, next = '/'): Promise<{ res: Response; html: string }> {
  const token = /name="_csrf" value="([^"]+)"/.exec((await w.get('/login')).html)![1];
  return w.post('/login', { username, password, next }, { csrf: token });
}
