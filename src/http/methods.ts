// Which methods a path accepts, from the routes registered on the app: the 405 METHOD_NOT_ALLOWED answer and its Allow header.
import { TrieRouter } from 'hono/router/trie-router';
import { ApiError } from '../errors';

interface Pattern {
  path: string;
  /** Parameter segments: the fewer, the more specific (`/devices/unreachable` before `/devices/:device_id`). */
  params: number;
  methods: string[];
}

/**
 * Filled once every route is registered (`load`), then read only. Middleware (method ALL) and wildcard paths are no
 * routes of their own. A path's methods are those of the most specific pattern it matches, whatever the method asked:
 * DELETE /devices/unreachable is a 405 (that path is GET only), not a DELETE of a device called "unreachable".
 */
export class MethodTable {
  private router: TrieRouter<Pattern> | null = null;

  load(routes: readonly { method: string; path: string }[]): void {
    const byPath = new Map<string, Set<string>>();
    for (const r of routes) {
      if (r.method === 'ALL' || r.path.includes('*')) continue;
      const methods = byPath.get(r.path) ?? new Set<string>();
      methods.add(r.method.toUpperCase());
      byPath.set(r.path, methods);
    }
    const router = new TrieRouter<Pattern>();
    for (const [path, set] of byPath) {
      // Hono answers HEAD with the GET route.
      if (set.has('GET')) set.add('HEAD');
      const params = path.split('/').filter((s) => s.startsWith(':')).length;
      router.add('ALL', path, { path, params, methods: [...set].sort() });
    }
    this.router = router;
  }

  /** The methods the path accepts, or null when no route has this path at all (a 404). */
  allowed(path: string): string[] | null {
    if (!this.router) return null;
    const [matches] = this.router.match('ALL', path);
    let best: Pattern | null = null;
    for (const [p] of matches) if (!best || p.params < best.params) best = p;
    return best ? best.methods : null;
  }

  /** The 405 when the path is known and the method is not one of its own; null otherwise (an unknown path is a 404). */
  refusal(method: string, path: string): ApiError | null {
    const allow = this.allowed(path);
    if (!allow || allow.includes(method)) return null;
    return new ApiError('METHOD_NOT_ALLOWED', `${method} is not supported on ${path.slice(0, 200)}; allowed: ${allow.join(', ')}`, { allow });
  }

  check(method: string, path: string): void {
    const refused = this.refusal(method, path);
    if (refused) throw refused;
  }
}
