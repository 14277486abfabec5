// Hono's default router, with the results of recent requests that matched a route kept: clients ask for the same paths again and again.
import type { Result, Router } from 'hono/router';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';

/**
 * Results kept, at most; past this the memory starts again. With MAX_PATH_LENGTH this bounds the memo to a few
 * megabytes whatever clients send: it is filled before authentication.
 */
export const MAX_REMEMBERED = 4096;
/** Longer paths are matched every time and never kept (real paths of the appliance are far shorter). */
export const MAX_PATH_LENGTH = 256;

/**
 * The routes of the appliance (API and web pages) put static and parameter segments side by side
 * (`/devices/unreachable`, `/devices/:device_id`), which Hono's RegExpRouter refuses, so the SmartRouter settles on
 * the TrieRouter: about a microsecond a request walking the tree. A match depends only on the method and path, and
 * Hono only reads it (its RegExpRouter hands out one shared result for each static path), so a result is kept, but
 * only when it reached a route (a path that only middleware matches, a 404 or a scan, is never kept) and only for a
 * short path.
 */
export class RememberingRouter<T> implements Router<T> {
  readonly name = 'RememberingRouter';
  private readonly router = new SmartRouter<T>({ routers: [new RegExpRouter(), new TrieRouter()] });
  private readonly results = new Map<string, Result<T>>();
  /** The handlers of routes proper (a method and a path without wildcard), as Hono registered them. */
  private readonly routeHandlers = new Set<T>();

  add(method: string, path: string, handler: T): void {
    this.router.add(method, path, handler);
    if (method !== 'ALL' && !path.includes('*')) this.routeHandlers.add(handler);
  }

  match(method: string, path: string): Result<T> {
    if (path.length > MAX_PATH_LENGTH) return this.router.match(method, path);
    const key = `${method} ${path}`;
    let result = this.results.get(key);
    if (result === undefined) {
      result = this.router.match(method, path);
      if (this.reachesRoute(result)) {
        if (this.results.size >= MAX_REMEMBERED) this.results.clear();
        this.results.set(key, result);
      }
    }
    return result;
  }

  /** How many results are kept (for tests). */
  get size(): number {
    return this.results.size;
  }

  private reachesRoute(result: Result<T>): boolean {
    for (const [handler] of result[0] as [T, unknown][]) if (this.routeHandlers.has(handler)) return true;
    return false;
  }
}
