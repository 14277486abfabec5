// Rendering of stored UTC millisecond timestamps as "YYYY-MM-DD HH:MM:SS" in a given IANA time zone.

const formatters = new Map<string, Intl.DateTimeFormat>();
/** Zones remembered, at most: zone names are validated IANA names (about 600), so this bound is never reached in use. */
const MAX_CACHED_ZONES = 1000;

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone: tz,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    if (formatters.size >= MAX_CACHED_ZONES) formatters.clear();
    formatters.set(tz, f);
  }
  return f;
}

function formatExact(ms: number, tz: string): string {
  const p: Record<string, string> = {};
  for (const part of formatter(tz).formatToParts(ms)) p[part.type] = part.value;
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

const DAY_SECONDS = 86_400;
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
/** Days since 1970-01-01 -> "YYYY-MM-DD": a page renders many instants of few days. */
const dayTexts = new Map<number, string>();
const MAX_CACHED_DAYS = 20_000;

/** A UTC instant as "YYYY-MM-DD HH:MM:SS", by arithmetic on a cached date (a history page formats 20 of them). */
function formatUtc(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  const day = Math.floor(seconds / DAY_SECONDS);
  let date = dayTexts.get(day);
  if (date === undefined) {
    const iso = new Date(day * DAY_SECONDS * 1000).toISOString();
    if (iso.length !== 24) return new Date(ms).toISOString().replace('T', ' ').slice(0, 19); // years beyond 0000-9999
    date = iso.slice(0, 10);
    if (dayTexts.size >= MAX_CACHED_DAYS) dayTexts.clear();
    dayTexts.set(day, date);
  }
  const rest = seconds - day * DAY_SECONDS;
  const h = Math.floor(rest / 3600);
  const m = Math.floor((rest % 3600) / 60);
  return `${date} ${TWO_DIGITS[h]}:${TWO_DIGITS[m]}:${TWO_DIGITS[rest % 60]}`;
}

const QUARTER_HOUR = 900_000;
const DAY_MS = 86_400_000;
const MAX_CACHED_OFFSETS = 50_000;
/**
 * Per zone: the UTC offset (ms) of each UTC day seen, or null for a day that holds a change of offset; for those days,
 * the offset of each quarter hour. A page of timestamps then costs an Intl call per new day, not one per timestamp.
 * No zone changes its offset twice within a day, and zone rules change on quarter-hour instants in practice; a
 * quarter hour that holds a change anyway is rendered exactly.
 */
const dayOffsets = new Map<string, Map<number, number | null>>();
const quarterOffsets = new Map<string, Map<number, number | null>>();

function exactOffset(ms: number, tz: string): number {
  const [y, mo, d, h, mi, s] = formatExact(ms, tz).split(/[- :]/).map(Number);
  return utcMillis(y, mo, d, h, mi, s) - Math.floor(ms / 1000) * 1000;
}

/**
 * The zone's offset over the `index`th span of `length` ms, or null when it changes within the span (checked at both
 * ends), kept per zone.
 */
function spanOffset(spans: Map<string, Map<number, number | null>>, tz: string, index: number, length: number): number | null {
  let zone = spans.get(tz);
  if (!zone) {
    if (spans.size >= MAX_CACHED_ZONES) spans.clear();
    spans.set(tz, (zone = new Map<number, number | null>()));
  }
  let offset = zone.get(index);
  if (offset === undefined) {
    const first = exactOffset(index * length, tz);
    offset = first === exactOffset(index * length + length - 1000, tz) ? first : null;
    if (zone.size >= MAX_CACHED_OFFSETS) zone.clear();
    zone.set(index, offset);
  }
  return offset;
}

export function formatTimestamp(ms: number, tz: string): string {
  if (tz === 'UTC') return formatUtc(ms);
  const offset = spanOffset(dayOffsets, tz, Math.floor(ms / DAY_MS), DAY_MS) ?? spanOffset(quarterOffsets, tz, Math.floor(ms / QUARTER_HOUR), QUARTER_HOUR);
  return offset === null ? formatExact(ms, tz) : formatUtc(ms + offset);
}

export function formatNullable(ms: number | null, tz: string): string | null {
  return ms === null ? null : formatTimestamp(ms, tz);
}

/**
 * Parse "YYYY-MM-DD HH:MM:SS" as a wall-clock time in `tz`; returns UTC milliseconds, or null when malformed.
 * In every zone alike: a wall time repeated by a fall-back is its earlier instant, and one skipped by a
 * spring-forward is moved forward by the gap (02:30 becomes 03:30), as java.time and Temporal do.
 */
export function parseLocalTimestamp(text: string, tz: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number);
  const asUtc = utcMillis(y, mo, d, h, mi, s);
  // Date arithmetic rolls out-of-range fields over (month 13, hour 24, 30 February): refuse instead.
  const back = new Date(asUtc);
  if (
    back.getUTCFullYear() !== y ||
    back.getUTCMonth() !== mo - 1 ||
    back.getUTCDate() !== d ||
    back.getUTCHours() !== h ||
    back.getUTCMinutes() !== mi ||
    back.getUTCSeconds() !== s
  ) {
    return null;
  }
  // The zone's offsets a day either side; no real zone changes offset twice within a day.
  const before = offsetAt(asUtc - DAY_MS, tz);
  const after = offsetAt(asUtc + DAY_MS, tz);
  const text24 = formatTimestamp(asUtc, 'UTC');
  const candidates = [asUtc - before, asUtc - after].filter((t) => formatTimestamp(t, tz) === text24).sort((a, b) => a - b);
  return candidates[0] ?? asUtc - before;
}

/** How far ahead of UTC the zone's wall clock is at this instant, in milliseconds. */
function offsetAt(ms: number, tz: string): number {
  const [y, mo, d, h, mi, s] = formatTimestamp(ms, tz).split(/[- :]/).map(Number);
  return utcMillis(y, mo, d, h, mi, s) - Math.floor(ms / 1000) * 1000;
}

/** Date.UTC without its mapping of years 0-99 to 1900-1999. */
function utcMillis(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  return date.getTime();
}
