// Rendering of stored UTC millisecond timestamps as "YYYY-MM-DD HH:MM:SS" in a given IANA time zone.

const formatters = new Map<string, Intl.DateTimeFormat>();

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
    formatters.set(tz, f);
  }
  return f;
}

export function formatTimestamp(ms: number, tz: string): string {
  if (tz === 'UTC') return new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
  const p: Record<string, string> = {};
  for (const part of formatter(tz).formatToParts(ms)) p[part.type] = part.value;
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

export function formatNullable(ms: number | null, tz: string): string | null {
  return ms === null ? null : formatTimestamp(ms, tz);
}

/**
 * Parse "YYYY-MM-DD HH:MM:SS" as a wall-clock time in `tz`; returns UTC milliseconds, or null when malformed.
 * Wall times in a DST gap resolve to the later offset.
 */
export function parseLocalTimestamp(text: string, tz: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number);
  const asUtc = Date.UTC(y, mo - 1, d, h, mi, s);
  if (Number.isNaN(asUtc) || new Date(asUtc).getUTCDate() !== d) return null;
  // Two passes of "what offset does tz have at this instant" converge for every real zone.
  let guess = asUtc;
  for (let i = 0; i < 2; i++) {
    const shown = formatTimestamp(guess, tz);
    const [sy, smo, sd, sh, smi, ss] = shown.split(/[- :]/).map(Number);
    guess += asUtc - Date.UTC(sy, smo - 1, sd, sh, smi, ss);
  }
  return guess;
}
