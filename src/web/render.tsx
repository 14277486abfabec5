// Rendering a page inside the layout, and the one-shot flash message carried across a redirect in a cookie.
import type { Child } from 'hono/jsx';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { Layout, type LayoutProps } from './components/layout';
import type { WebContext } from './web-context';

const FLASH_COOKIE = 'confvault_flash';

export interface PageOptions {
  title: string;
  active?: string;
  restricted?: boolean;
  status?: number;
}

export async function render(c: WebContext, opts: PageOptions, body: Child): Promise<Response> {
  const session = c.get('session');
  const props: LayoutProps = {
    title: opts.title,
    active: opts.active,
    restricted: opts.restricted ?? session?.mustChangePassword,
    principal: session?.principal,
    csrf: session?.csrfToken,
    flash: takeFlash(c),
  };
  // hono types the element as a string or a Promise of one; at run time it is a node whose toString() may return a Promise (async components).
  // eslint-disable-next-line @typescript-eslint/await-thenable, @typescript-eslint/no-base-to-string -- see above
  const html = '<!DOCTYPE html>' + (await (<Layout {...props}>{body}</Layout>).toString());
  c.header('Cache-Control', 'no-store');
  return c.html(html, (opts.status ?? 200) as 200);
}

/** Redirect with a message for the next page (Post/Redirect/Get, so a reload never repeats the action). */
export function redirectWith(c: WebContext, location: string, text: string, kind: 'ok' | 'error' = 'ok'): Response {
  setCookie(c, FLASH_COOKIE, `${kind}:${encodeURIComponent(text.slice(0, 500))}`, { path: '/', httpOnly: true, sameSite: 'Lax', maxAge: 60 });
  return c.redirect(location, 303);
}

function takeFlash(c: WebContext): LayoutProps['flash'] {
  const v = getCookie(c, FLASH_COOKIE);
  if (!v) return null;
  deleteCookie(c, FLASH_COOKIE, { path: '/' });
  const [kind, text] = [v.slice(0, v.indexOf(':')), v.slice(v.indexOf(':') + 1)];
  try {
    return { kind: kind === 'error' ? 'error' : 'ok', text: decodeURIComponent(text) };
  } catch {
    return null;
  }
}
