// Timestamps as "YYYY-MM-DD HH:MM:SS" in a zone: formatting and parsing agree across DST changes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatNullable, formatTimestamp, parseLocalTimestamp } from '../../src/lib/time';

const HOUR = 3_600_000;

test('formatTimestamp renders UTC and zoned wall-clock times', () => {
  const ms = Date.UTC(2024, 6, 1, 12, 34, 56); // summer
  assert.equal(formatTimestamp(ms, 'UTC'), '2024-07-01 12:34:56');
  assert.equal(formatTimestamp(ms, 'Europe/Berlin'), '2024-07-01 14:34:56');
  assert.equal(formatTimestamp(ms, 'America/New_York'), '2024-07-01 08:34:56');
  const winter = Date.UTC(2024, 0, 15, 0, 5, 0);
  assert.equal(formatTimestamp(winter, 'Europe/Berlin'), '2024-01-15 01:05:00');
  assert.equal(formatTimestamp(winter, 'America/New_York'), '2024-01-14 19:05:00');
  // Midnight is 00, never 24.
  assert.equal(formatTimestamp(Date.UTC(2024, 0, 14, 23, 0, 0), 'Europe/Berlin'), '2024-01-15 00:00:00');
  assert.equal(formatNullable(null, 'UTC'), null);
  assert.equal(formatNullable(0, 'UTC'), '1970-01-01 00:00:00');
});

test('formatTimestamp in UTC matches the ISO rendering of the same instant, before and after 1970 and across leap days', () => {
  const iso = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
  const instants = [
    0,
    -1,
    -1000,
    999,
    Date.UTC(2024, 1, 29, 23, 59, 59, 999),
    Date.UTC(2000, 1, 29),
    Date.UTC(1969, 11, 31, 23, 59, 59),
    Date.UTC(9999, 11, 31, 23, 59, 59),
  ];
  for (let i = 0; i < 2000; i++) instants.push(Math.floor((Math.random() - 0.3) * 4e12));
  for (const ms of instants) assert.equal(formatTimestamp(ms, 'UTC'), iso(ms), `${ms}`);
});

// [zone, a UTC instant a few hours before a DST change]
const transitions: [string, string, number][] = [
  ['Europe/Berlin', 'spring forward', Date.UTC(2024, 2, 30, 22)],
  ['Europe/Berlin', 'fall back', Date.UTC(2024, 9, 26, 22)],
  ['America/New_York', 'spring forward', Date.UTC(2024, 2, 10, 3)],
  ['America/New_York', 'fall back', Date.UTC(2024, 10, 3, 2)],
];

for (const [tz, what, start] of transitions) {
  test(`format → parse round trip every 15 minutes across ${what} in ${tz}`, () => {
    let ambiguous = 0;
    for (let ms = start; ms < start + 8 * HOUR; ms += 15 * 60_000) {
      const text = formatTimestamp(ms, tz);
      const back = parseLocalTimestamp(text, tz);
      assert.ok(back !== null, text);
      // The same wall time again; in the repeated hour of a fall-back it is the earlier of the two instants.
      assert.equal(formatTimestamp(back, tz), text);
      if (back !== ms) {
        ambiguous++;
        assert.equal(back, ms - HOUR, `${text} should be the earlier of its two instants`);
      }
    }
    // The second pass through the repeated hour: four quarter-hours map back to the first pass.
    if (what === 'fall back') assert.equal(ambiguous, 4);
    else assert.equal(ambiguous, 0);
  });
}

test('known instants around the changes parse exactly', () => {
  // Berlin: 2024-03-31 01:59:59 CET is 00:59:59Z; 03:00:00 CEST is 01:00:00Z.
  assert.equal(parseLocalTimestamp('2024-03-31 01:59:59', 'Europe/Berlin'), Date.UTC(2024, 2, 31, 0, 59, 59));
  assert.equal(parseLocalTimestamp('2024-03-31 03:00:00', 'Europe/Berlin'), Date.UTC(2024, 2, 31, 1, 0, 0));
  // New York: 2024-11-03 00:30 EDT is 04:30Z; 02:30 EST is 07:30Z.
  assert.equal(parseLocalTimestamp('2024-11-03 00:30:00', 'America/New_York'), Date.UTC(2024, 10, 3, 4, 30));
  assert.equal(parseLocalTimestamp('2024-11-03 02:30:00', 'America/New_York'), Date.UTC(2024, 10, 3, 7, 30));
  assert.equal(parseLocalTimestamp('2024-07-01 12:00:00', 'UTC'), Date.UTC(2024, 6, 1, 12));
  assert.equal(parseLocalTimestamp('2024-07-01T12:00:00', 'UTC'), Date.UTC(2024, 6, 1, 12));
});

test('a repeated wall time is its earlier instant in zones east and west of UTC alike', () => {
  // Berlin 2024-10-27 02:30 happens at 00:30Z (CEST) and 01:30Z (CET); New York 2024-11-03 01:30 at 05:30Z (EDT) and 06:30Z (EST).
  assert.equal(parseLocalTimestamp('2024-10-27 02:30:00', 'Europe/Berlin'), Date.UTC(2024, 9, 27, 0, 30));
  assert.equal(parseLocalTimestamp('2024-11-03 01:30:00', 'America/New_York'), Date.UTC(2024, 10, 3, 5, 30));
});

test('a wall time inside a spring-forward gap moves forward by the gap in zones east and west of UTC alike', () => {
  for (const [text, tz, shown] of [
    ['2024-03-31 02:30:00', 'Europe/Berlin', '2024-03-31 03:30:00'],
    ['2024-03-10 02:30:00', 'America/New_York', '2024-03-10 03:30:00'],
  ]) {
    const ms = parseLocalTimestamp(text, tz);
    assert.ok(ms !== null);
    assert.equal(formatTimestamp(ms, tz), shown);
  }
});

test('malformed or impossible timestamps are refused, not rolled over', () => {
  for (const text of [
    '',
    'yesterday',
    '2024-07-01',
    '2024-07-01 12:00',
    '2024-7-1 12:00:00',
    '2024-02-30 00:00:00',
    '2023-02-29 00:00:00',
    '2024-13-01 00:00:00',
    '2024-00-10 00:00:00',
    '2024-01-01 24:00:00',
    '2024-01-01 23:60:00',
    '2024-01-01 23:59:60',
  ]) {
    assert.equal(parseLocalTimestamp(text, 'Europe/Berlin'), null, text);
  }
  assert.equal(parseLocalTimestamp('2024-02-29 23:59:59', 'UTC'), Date.UTC(2024, 1, 29, 23, 59, 59));
  // Years below 100 are not shifted into the 1900s.
  assert.equal(formatTimestamp(parseLocalTimestamp('0050-06-01 00:00:00', 'UTC')!, 'UTC'), '0050-06-01 00:00:00');
});
