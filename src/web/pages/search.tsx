// Search page: text or regex across the newest configuration of every device in scope, hits with context lines.
import type { Hono } from 'hono';
import { raw } from 'hono/html';
import { ApiError } from '../../errors';
import { FieldError } from '../components/layout';
import { render } from '../render';
import { actorOf } from '../../http/context';
import { buildMatcher, searchConfigsAs, type SearchResult } from '../search';
import { fieldErrors, formatTime, need, type WebEnv } from '../web-context';

export function registerSearch(web: Hono<WebEnv>): void {
  web.get('/search', need('devices.view', 'backups.view'), async (c) => {
    const q = c.req.query('q') ?? '';
    const mode = c.req.query('mode') === 'regex' ? 'regex' : 'text';
    const cs = c.req.query('case') === '1';
    let result: SearchResult | null = null;
    let errors: Record<string, string> | null = null;
    if (q) {
      try {
        result = await searchConfigsAs(c.get('app'), actorOf(c), buildMatcher(q, mode, cs));
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        errors = fieldErrors(err);
      }
    }
    const tz = c.get('timezone');
    return render(
      c,
      { title: 'Search', active: '/search', status: errors ? 422 : 200 },
      <>
        <h1>Search configurations</h1>
        <form method="get" action="/search" class="row" role="search">
          <label class="grow">
            Text or regular expression (RE2 syntax)
            <input name="q" type="search" value={q} required maxlength={200} placeholder="ip route 203.0.113.0/24" autofocus />
            <FieldError errors={errors} name="q" />
          </label>
          <label>
            Mode
            <select name="mode">
              <option value="text" selected={mode === 'text'}>
                Text
              </option>
              <option value="regex" selected={mode === 'regex'}>
                Regex
              </option>
            </select>
          </label>
          <label class="check">
            <input type="checkbox" name="case" value="1" checked={cs} /> Match case
          </label>
          <button type="submit" class="primary">
            Search
          </button>
        </form>
        {result ? (
          <section id="search-results">
            <p class="muted">
              {result.hits.length} device(s) with matches among {result.devicesSearched} searched in {result.elapsedMs} ms
              {result.truncated ? ' — stopped early: narrow the search to see everything' : ''}.
            </p>
            {result.partial ? (
              <p class="advice" id="search-partial">
                Partial results: time budget reached. The devices not searched yet are missing; narrow the search to see everything.
              </p>
            ) : null}
            {result.hits.map((h) => (
              <article class="hit card">
                <h3>
                  <a href={`/devices/${h.deviceId}`}>{h.deviceName}</a>{' '}
                  <span class="muted">
                    {h.matchCount} match(es) in the <a href={`/devices/${h.deviceId}/backups/${h.backupId}`}>version of {formatTime(h.startedAt, tz)}</a>
                  </span>
                </h3>
                {raw(h.blocksHtml)}
              </article>
            ))}
          </section>
        ) : null}
      </>,
    );
  });
}
