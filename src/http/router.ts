// Hono's default router, with the result of each recent method and path kept: clients ask for the same paths again and again.
import type { Result, Router } from 'hono/router';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { SmartRouter } from 'hono/router/smart-router';
import { TrieRouter } from 'hono/router/trie-router';

/** Paths remembered; past this the memory starts again (a scan of random paths cannot grow it). */
const MAX_REMEMBERED = 20_000;

/**
 * The routes of the appliance (API and web pages) put static and parameter segments side by side
 * (`/devices/unreachable`, `/devices/:device_id`), which Hono's RegExpRouter refuses, so the SmartRouter settles on
 * the TrieRouter: about a microsecond a request walking the tree. A match depends only on the method and path, and
 * Hono only reads it (its RegExpRouter hands out one shared result for each static path), so a result is kept.
 */
export class RememberingRouter<T> implements Router<T> {
  readonly name = 'RememberingRouter';
  private readonly router = new SmartRouter<T>({ routers: [new RegExpRouter(), new TrieRouter()] });
  private readonly results = new Map<string, Result<T>>();

  add(method: string, path: string, handler: T): void {
    this.router.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    const key = `${method} ${path}`;
    let result = this.results.get(key);
    if (result === undefined) {
      result = this.router.match(method, path);
      if (this.results.size >= MAX_REMEMBERED) this.results.clear();
      this.results.set(key, result);
    }
    return result;
  }
}
