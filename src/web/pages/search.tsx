// Search page: text or regex across the newest configuration of every device in scope (by group and platform), hits paged with context lines, CSV/text export.
import { BACKUP_OPS } from '../../features/policy';
import { GroupPlatformFilters } from '../components/filter-select';
import type { Hono } from 'hono';
import { raw } from 'hono/html';
import { ApiError } from '../../errors';
import { listPlatforms } from '../../features/devices/devices.service';
import { FieldError, Pager } from '../components/layout';
import { render } from '../render';
import { actorOf } from '../../http/context';
import { buildMatcher, searchConfigsAs, type SearchOptions, type SearchResult } from '../../features/configs/search.service';
import { exportNote, searchCsv, searchText } from '../search-export';
import { fieldErrors, formatTime, intQuery, need, type WebContext, type WebEnv } from '../web-context';
import { groupOptions } from './groups-options';

/** Devices with hits per page. */
const PAGE = 25;

interface Form {
  q: string;
  mode: 'text' | 'regex';
  cs: boolean;
  groupId: number;
  templateId: number;
}

function readForm(c: WebContext): Form {
  return {
    q: c.req.query('q') ?? '',
    mode: c.req.query('mode') === 'regex' ? 'regex' : 'text',
    cs: c.req.query('case') === '1',
    groupId: intQuery(c, 'group_id', 0),
    templateId: intQuery(c, 'template_id', 0),
  };
}

/** The form as query parameters (pager and export links carry the same search). */
function formParams(f: Form): Record<string, string | undefined> {
  return {
    q: f.q,
    mode: f.mode === 'regex' ? 'regex' : undefined,
    case: f.cs ? '1' : undefined,
    group_id: f.groupId ? String(f.groupId) : undefined,
    template_id: f.templateId ? String(f.templateId) : undefined,
  };
}

function filters(f: Form): SearchOptions {
  return { groupId: f.groupId || undefined, templateId: f.templateId || undefined };
}

export function registerSearch(web: Hono<WebEnv>): void {
  web.get('/search', need(BACKUP_OPS.search), (c) => searchPage(c));

  // The hits as a file, with the page's filters and the user's scope; bounded (EXPORT_LIMITS), said in a header and in the text.
  web.get('/search/export', need(BACKUP_OPS.search), async (c) => {
    const f = readForm(c);
    const format = c.req.query('format') === 'txt' ? 'txt' : 'csv';
    // A bad query is the 422 of any page (the error handler): there is nothing to export.
    const query = buildMatcher(f.q, f.mode, f.cs);
    const result = await searchConfigsAs(c.get('app'), actorOf(c), query, { ...filters(f), export: true, format });
    const tz = c.get('timezone');
    const note = exportNote(result);
    if (note) c.header('X-Search-Incomplete', note);
    c.header('Content-Disposition', `attachment; filename="search.${format}"`);
    c.header('Cache-Control', 'no-store');
    return format === 'csv'
      ? c.body(searchCsv(result, tz), 200, { 'Content-Type': 'text/csv; charset=utf-8' })
      : c.body(searchText(result, tz), 200, { 'Content-Type': 'text/plain; charset=utf-8' });
  });
}

async function searchPage(c: WebContext) {
  const f = readForm(c);
  const page = intQuery(c, 'page', 1, 10_000);
  let result: SearchResult | null = null;
  let errors: Record<string, string> | null = null;
  if (f.q) {
    try {
      const window = { from: (page - 1) * PAGE, to: page * PAGE };
      result = await searchConfigsAs(c.get('app'), actorOf(c), buildMatcher(f.q, f.mode, f.cs), { ...filters(f), window });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      errors = fieldErrors(err);
    }
  }
  const db = c.get('app').db;
  const groups = groupOptions(db, c.get('principal').scope);
  const platforms = listPlatforms(db);
  const tz = c.get('timezone');
  const params = formParams(f);
  const exportHref = (format: string) => {
    const q = new URLSearchParams({ format });
    for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
    return `/search/export?${q}`;
  };
  const shown = result ? result.hits : [];
  return render(
    c,
    { title: 'Search', active: '/search', status: errors ? 422 : 200 },
    <>
      <h1>Search configurations</h1>
      <form method="get" action="/search" class="row" role="search" id="search-form">
        <label class="grow">
          Text or regular expression (RE2 syntax)
          <input name="q" type="search" value={f.q} required maxlength={200} placeholder="ip route 203.0.113.0/24" autofocus />
          <FieldError errors={errors} name="q" />
        </label>
        <label>
          Mode
          <select name="mode">
            <option value="text" selected={f.mode === 'text'}>
              Text
            </option>
            <option value="regex" selected={f.mode === 'regex'}>
              Regex
            </option>
          </select>
        </label>
        <GroupPlatformFilters groups={groups} platforms={platforms} groupId={f.groupId} templateId={f.templateId} />
        <label class="check">
          <input type="checkbox" name="case" value="1" checked={f.cs} /> Match case
        </label>
        <button type="submit" class="primary">
          Search
        </button>
      </form>
      {result ? (
        <section id="search-results">
          <p class="muted">
            {result.truncated ? 'At least ' : ''}
            {result.total} device(s) with matches among {result.devicesSearched} searched in {result.elapsedMs} ms
            {result.truncated ? ' — the search stopped there; the last page goes further' : ''}.{' '}
            {result.total > 0 ? (
              <span id="search-export">
                Export the hits: <a href={exportHref('csv')}>CSV</a> · <a href={exportHref('txt')}>plain text</a>
              </span>
            ) : null}
          </p>
          {result.partial ? (
            <p class="advice" id="search-partial">
              Partial results: time budget reached. The devices not searched yet are missing; narrow the search to see everything.
            </p>
          ) : null}
          {shown.map((h) => (
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
          <Pager base="/search" params={params} page={page} limit={PAGE} total={result.total} />
        </section>
      ) : null}
    </>,
  );
}
