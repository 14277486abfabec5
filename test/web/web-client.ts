// A minimal browser stand-in for web tests: a cookie jar, the login form flow, and CSRF tokens read from pages.
import assert from 'node:assert/strict';

export class WebClient {
  readonly cookies = new Map<string, string>();
  constructor(readonly base: string) {}

  private absorb(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      const expired = attrs.some((a) => /max-age=0/i.test(a) || /expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('Cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(this.base + path, { redirect: 'manual', ...init, headers });
    this.absorb(res);
    return res;
  }

  async get(path: string): Promise<{ res: Response; html: string }> {
    const res = await this.fetch(path);
    return { res, html: await res.text() };
  }

  /** POST a form; `csrf: true` adds the session's token read from a page. */
  async post(
    path: string,
    fields: Record<string, string>,
    opts: { csrf?: boolean | string; headers?: Record<string, string> } = {},
  ): Promise<{ res: Response; html: string }> {
    const body = new URLSearchParams(fields);
    if (opts.csrf === true) body.set('_csrf', await this.csrf());
    else if (typeof opts.csrf === 'string') body.set('_csrf', opts.csrf);
    const res = await this.fetch(path, { method: 'POST', body, headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...opts.headers } });
    return { res, html: await res.text() };
  }

  /** The session's CSRF token, from the meta tag every logged-in page carries. */
  async csrf(): Promise<string> {
    const { html } = await this.get('/account');
    const m = /<meta name="csrf-token" content="([^"]+)"/.exec(html);
    assert.ok(m, 'no CSRF token on /account (not logged in?)');
    return m[1];
  }

  async login(username: string, password: string): Promise<Response> {
    const page = await this.get('/login');
    const token = /name="_csrf" value="([^"]+)"/.exec(page.html)?.[1];
    assert.ok(token, 'login form has a CSRF token');
    const { res } = await this.post('/login', { username, password, next: '/' }, { csrf: token });
    return res;
  }
}
