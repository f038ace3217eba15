// Times as the ledger writes and reads them, in the browser: RFC3339.swift and LedgerDomain
// RecordedTime, by integer calendar arithmetic on BigInt microseconds since 1970 (not Date, which
// keeps milliseconds only). Pure. Contract:
//   - parseRFC3339Micros(text) → BigInt microseconds: RFC3339.swift's form (YYYY-MM-DDTHH:MM:SS, an
//     optional fraction of 1–9 digits cut toward the past, Z or ±HH:MM, t and z too; a leap second
//     as the minute's last instant), years 1 to 9999 as the API's at= takes them; null for any other.
//   - recordedMicros(text) → BigInt microseconds (RecordedTime.micros): only the form the log
//     writes (27 bytes, T, six digits, Z), from year 1; null for any other.
//   - timeText(micros) → RFC 3339 text with six fractional digits (RFC3339.text(micros:)), UTC,
//     micros a BigInt.
import { utf8 } from './note.js';

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil, BigInt
// division truncating as Swift's does).
function days(year, month, day) {
  const y = month <= 2n ? year - 1n : year;
  const era = (y >= 0n ? y : y - 399n) / 400n;
  const yoe = y - era * 400n;
  const doy = (153n * (month > 2n ? month - 3n : month + 9n) + 2n) / 5n + day - 1n;
  const doe = yoe * 365n + yoe / 4n - yoe / 100n + doy;
  return era * 146097n + doe - 719468n;
}
function daysIn(month, year) {
  if (month === 2n) return (year % 4n === 0n && year % 100n !== 0n) || year % 400n === 0n ? 29n : 28n;
  return [4n, 6n, 9n, 11n].includes(month) ? 30n : 31n;
}

// RFC3339.instant: {seconds, nanos} since 1970, exactly, or null. Read on the UTF-8 bytes.
function instant(text) {
  if (typeof text !== 'string') return null;
  const b = utf8(text);
  if (b.length < 20 || b.length > 40) return null;
  const number = (from, to) => {
    let v = 0n;
    for (let i = from; i < to; i++) {
      if (b[i] < 0x30 || b[i] > 0x39) return null;
      v = v * 10n + BigInt(b[i] - 0x30);
    }
    return v;
  };
  const [year, month, day] = [number(0, 4), number(5, 7), number(8, 10)];
  const [hour, minute, second] = [number(11, 13), number(14, 16), number(17, 19)];
  if ([year, month, day, hour, minute, second].includes(null)) return null;
  if (b[4] !== 0x2d || b[7] !== 0x2d || (b[10] !== 0x54 && b[10] !== 0x74) || b[13] !== 0x3a || b[16] !== 0x3a) return null;
  if (month < 1n || month > 12n || day < 1n || day > daysIn(month, year) || hour > 23n || minute > 59n || second > 60n) return null;
  let i = 19, nanos = 0n;
  if (b[i] === 0x2e) {
    i += 1;
    let digits = 0;
    for (; i < b.length && b[i] >= 0x30 && b[i] <= 0x39; i++, digits++) {
      if (digits >= 9) return null;
      nanos = nanos * 10n + BigInt(b[i] - 0x30);
    }
    if (!digits) return null;
    for (; digits < 9; digits++) nanos *= 10n;
  }
  if (i >= b.length) return null;
  let offset = 0n;
  if (b[i] === 0x5a || b[i] === 0x7a) {
    if (i + 1 !== b.length) return null;
  } else if (b[i] === 0x2b || b[i] === 0x2d) {
    const h = i + 6 === b.length ? number(i + 1, i + 3) : null, m = h === null ? null : number(i + 4, i + 6);
    if (m === null || b[i + 3] !== 0x3a || h > 23n || m > 59n) return null;
    offset = (h * 3600n + m * 60n) * (b[i] === 0x2d ? -1n : 1n);
  } else {
    return null;
  }
  const seconds = days(year, month, day) * 86400n + hour * 3600n + minute * 60n + second - offset;
  if (second !== 60n) return { seconds, nanos };
  // A leap second: only in the last minute of a UTC day; its last nanosecond.
  const lastMinute = (seconds - 60n) % 86400n;
  if (lastMinute !== 86340n && lastMinute !== -60n) return null;
  return { seconds: seconds - 1n, nanos: 999999999n };
}

const FIRST = -62135596800n, PAST_LAST = 253402300800n;   // 0001-01-01, 10000-01-01
export function parseRFC3339Micros(text) {
  const t = instant(text);
  if (!t || t.seconds < FIRST || t.seconds >= PAST_LAST) return null;
  return t.seconds * 1000000n + t.nanos / 1000n;
}

// RecordedTime.micros: only the form the log writes (27 bytes, T, six digits, Z), from year 1;
// null otherwise, and a bound that does not read is no bound (AccessWindow's notAfterMicros).
export function recordedMicros(text) {
  const b = typeof text === 'string' ? utf8(text) : null;
  if (!b || b.length !== 27 || b[10] !== 0x54 || b[19] !== 0x2e || b[26] !== 0x5a) return null;
  const t = instant(text);
  return t && t.seconds >= FIRST ? t.seconds * 1000000n + t.nanos / 1000n : null;
}

// RFC3339.text(micros:): UTC, six fractional digits, by integer calendar arithmetic (H. Hinnant's
// civil_from_days, with Swift's truncating division, which BigInt shares).
export function timeText(micros) {
  let seconds = micros / 1000000n, fraction = micros % 1000000n;
  if (fraction < 0n) { seconds -= 1n; fraction += 1000000n; }
  let day = seconds / 86400n, second = seconds % 86400n;
  if (second < 0n) { day -= 1n; second += 86400n; }
  const z = day + 719468n;
  const era = (z >= 0n ? z : z - 146096n) / 146097n;
  const doe = z - era * 146097n;
  const yoe = (doe - doe / 1460n + doe / 36524n - doe / 146096n) / 365n;
  const doy = doe - (365n * yoe + yoe / 4n - yoe / 100n);
  const mp = (5n * doy + 2n) / 153n;
  const d = doy - (153n * mp + 2n) / 5n + 1n;
  const m = mp < 10n ? mp + 3n : mp - 9n;
  const y = yoe + era * 400n + (m <= 2n ? 1n : 0n);
  const pad = (v, w) => String(v).padStart(w, '0');
  return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}T${pad(second / 3600n, 2)}:${pad((second / 60n) % 60n, 2)}:` +
    `${pad(second % 60n, 2)}.${pad(fraction, 6)}Z`;
}
