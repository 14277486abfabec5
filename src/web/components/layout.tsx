// The page frame: head (CSS, script, CSRF token for scripts), skip link, navigation limited to what the user may use (collapsed on phones), flash message.
import type { Child } from 'hono/jsx';
import type { Permission } from '../../identity/permissions';
import type { Principal } from '../../identity/principal';
import { staticUrl } from '../static';

interface NavItem {
  href: string;
  label: string;
  perms: Permission[];
}

const NAV: NavItem[] = [
  { href: '/', label: 'Dashboard', perms: ['dashboard.view'] },
  { href: '/devices', label: 'Devices', perms: ['devices.view'] },
  { href: '/jobs', label: 'Jobs', perms: ['backups.view'] },
  { href: '/search', label: 'Search', perms: ['devices.view', 'backups.view'] },
  { href: '/groups', label: 'Groups', perms: ['groups.view'] },
  { href: '/credentials', label: 'Credentials', perms: ['credentials.view'] },
  { href: '/templates', label: 'Templates', perms: ['templates.view'] },
  { href: '/compliance', label: 'Compliance', perms: ['compliance.view'] },
  { href: '/users', label: 'Users', perms: ['users.view'] },
  { href: '/roles', label: 'Roles', perms: ['roles.view'] },
  { href: '/api-keys', label: 'API keys', perms: ['api_keys.view'] },
  { href: '/audit', label: 'Audit log', perms: ['audit.view'] },
  { href: '/settings/notifications', label: 'Notifications', perms: ['settings.view'] },
  { href: '/inventory', label: 'Inventory', perms: ['inventory.view'] },
  { href: '/collectors', label: 'Collectors', perms: ['collectors.view'] },
];

export interface LayoutProps {
  title: string;
  principal?: Principal;
  csrf?: string;
  /** The current section, to mark it in the navigation. */
  active?: string;
  flash?: { kind: 'ok' | 'error'; text: string } | null;
  /** Password change is forced: no navigation until it is done. */
  restricted?: boolean;
  children?: Child;
}

export function Layout(props: LayoutProps) {
  const p = props.principal;
  const items = p && !props.restricted ? NAV.filter((n) => n.perms.every((x) => p.permissions.has(x))) : [];
  const links = items.map((n) => (
    <a href={n.href} class={props.active === n.href ? 'active' : undefined} aria-current={props.active === n.href ? 'page' : undefined}>
      {n.label}
    </a>
  ));
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {props.csrf ? <meta name="csrf-token" content={props.csrf} /> : null}
        <title>{`${props.title} · confvault`}</title>
        <link rel="stylesheet" href={staticUrl('app.css')} />
        <link rel="stylesheet" href={staticUrl('small-screens.css')} media="(max-width: 767.98px)" />
        <script src={staticUrl('app.js')} defer></script>
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href="/">
            confvault
          </a>
          {/* Wide screens show the menu as a row; phones get it behind a <details> toggle, which needs no script. Only one is displayed. */}
          {items.length ? (
            <>
              <nav class="nav wide-only" aria-label="Main">
                {links}
              </nav>
              <details class="menu narrow-only">
                <summary>Menu</summary>
                <nav class="nav" aria-label="Main">
                  {links}
                </nav>
              </details>
            </>
          ) : null}
          {p ? (
            <div class="me">
              {props.restricted ? null : (
                <a href="/account" class="who">
                  {p.username}
                </a>
              )}
              <form method="post" action="/logout" class="inline">
                <input type="hidden" name="_csrf" value={props.csrf} />
                <button type="submit" class="link">
                  Log out
                </button>
              </form>
            </div>
          ) : null}
        </header>
        <main id="main" tabindex={-1}>
          {props.flash ? (
            <p class={`flash ${props.flash.kind}`} role={props.flash.kind === 'error' ? 'alert' : 'status'}>
              {props.flash.text}
            </p>
          ) : null}
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** A hidden CSRF field for a form. */
export function Csrf({ token }: { token: string }) {
  return <input type="hidden" name="_csrf" value={token} />;
}

/** The header of a table's last column of buttons: empty on screen, named for screen readers. */
export function ActionsHeader() {
  return (
    <th>
      <span class="visually-hidden">Actions</span>
    </th>
  );
}

/** A form's own error (not tied to one field), announced to screen readers. */
export function FormError({ errors, full }: { errors?: Record<string, string> | null; full?: boolean }) {
  const m = errors?._form;
  return m ? (
    <p class={full ? 'flash error full' : 'flash error'} role="alert">
      {m}
    </p>
  ) : null;
}

/** The message of one field's error, placed right after its input. */
export function FieldError({ errors, name }: { errors?: Record<string, string> | null; name: string }) {
  const m = errors?.[name];
  return m ? (
    <span class="field-error" id={`${name}-error`} role="alert">
      {m}
    </span>
  ) : null;
}

/**
 * The page numbers a pager shows: the first and last two, and two either side of the current one; null marks a gap
 * ("1 2 3 … 9 10"). Bounded whatever the total, so a list of 100,000 pages still renders eleven links.
 */
export function pagerPages(page: number, pages: number): (number | null)[] {
  const keep = new Set<number>();
  for (const n of [1, 2, pages - 1, pages, page - 2, page - 1, page, page + 1, page + 2]) if (n >= 1 && n <= pages) keep.add(n);
  const out: (number | null)[] = [];
  let last = 0;
  for (const n of [...keep].sort((a, b) => a - b)) {
    if (n > last + 1) out.push(n === last + 2 ? last + 1 : null);
    out.push(n);
    last = n;
  }
  return out;
}

/** Numbered pages with previous/next links, keeping the other query parameters; the current page is marked for screen readers. */
export function Pager({
  base,
  params,
  page,
  limit,
  total,
}: {
  base: string;
  params: Record<string, string | undefined>;
  page: number;
  limit: number;
  total: number;
}) {
  const pages = Math.max(1, Math.ceil(total / limit));
  const href = (n: number) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
    q.set('page', String(n));
    return `${base}?${q}`;
  };
  return (
    <nav class="pager" aria-label="Pages">
      {page > 1 ? (
        <a href={href(Math.min(page - 1, pages))} rel="prev">
          ← Previous
        </a>
      ) : (
        <span />
      )}
      {pages > 1 ? (
        <span class="pages">
          {pagerPages(page, pages).map((n) =>
            n === null ? (
              <span class="gap" aria-hidden="true">
                …
              </span>
            ) : n === page ? (
              <a href={href(n)} aria-current="page" class="current">
                <span class="visually-hidden">Page </span>
                {n}
              </a>
            ) : (
              <a href={href(n)}>
                <span class="visually-hidden">Page </span>
                {n}
              </a>
            ),
          )}
        </span>
      ) : null}
      <span class="muted">
        Page {Math.min(page, pages)} of {pages} · {total} in all
      </span>
      {page < pages ? (
        <a href={href(page + 1)} rel="next">
          Next →
        </a>
      ) : (
        <span />
      )}
    </nav>
  );
}
