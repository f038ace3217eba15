// A collaboration's members at a time, verified in the browser from its lookup answer alone: the
// answer checked link by link (lookup.js), then the events recorded by that time read back from
// their leaves and folded with the domain's rules, nothing taken from the ledger's views. A
// second implementation of VerifiedMembers.swift (fold, status) and CollaborationState.apply, the
// events read as CollaborationEvents.swift decodes them (docs/TRUST.md, "Members, verified",
// "Members at a time"). Contract:
//   verifiedMembersAt(answer, {key, witnesses, collaboration, atMicros, through, timesRiseFrom,
//   statesAt}) →
//   {report, through, owner, members: [{rootHash, state, account, notBefore, notAfter}]}
//   - report: verifyLookup's; through: the last position folded, report.recordedThrough at a time
//     (VerifiedMembers.fold(recordedBy:)), else the position through (the revision must cover it;
//     VerifiedMembers.fold(at:)) or, without either, the revision's size.
//   - owner: the start's owner (a pseudonym), null when no start was recorded by then (members []).
//   - members: every identity the events name (removed ones too), by root hash as Swift sorts them;
//     state as of atMicros (VerifiedMembers.status): invited, granted, removed, expired or
//     scheduled; account and the window's bounds as the events hold them, null when none.
//   - Without atMicros, states are as the events leave them (no window read against a time), or
//     as of statesAt when given (with through: the views' "now" at a position).
//   - A broken link throws LinkError (lookup.js); an event the domain would not read, a second
//     start or an event before the start throws FoldError (its link: fold).
//   parseRFC3339Micros(text) → BigInt microseconds: RFC3339.swift's form (YYYY-MM-DDTHH:MM:SS, an
//   optional fraction of 1–9 digits cut toward the past, Z or ±HH:MM, t and z too; a leap second
//   as the minute's last instant), years 1 to 9999 as the API's at= takes them; null for any other.
import { b64decode, utf8, wellFormed } from './note.js';
import { verifyLookup } from './lookup.js';

// Not a link of the proof (every one held): the events themselves do not fold. link names it
// for a caller that shows e.link.
export class FoldError extends Error {
  constructor(message) { super(message); this.name = 'FoldError'; this.link = 'fold'; }
}

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
function recordedMicros(text) {
  const b = typeof text === 'string' ? utf8(text) : null;
  if (!b || b.length !== 27 || b[10] !== 0x54 || b[19] !== 0x2e || b[26] !== 0x5a) return null;
  const t = instant(text);
  return t && t.seconds >= FIRST ? t.seconds * 1000000n + t.nanos / 1000n : null;
}

// The events' data as Swift's Codable reads them: required members present and of their type,
// optional ones absent, null or of their type, other members ignored.
const S = (v) => typeof v === 'string' && wellFormed(v);
const opt = (f) => (v) => v === undefined || v === null || f(v);
const ROOT = (v) => { const b = b64decode(v); return !!b && b.length === 32; };   // RootHash
const U64 = (v) => Number.isInteger(v) && v >= 0 && v <= 2 ** 64 - 1;
const BOOL = (v) => typeof v === 'boolean';
const oneOf = (...names) => (v) => names.includes(v);
const arrayOf = (f) => (v) => Array.isArray(v) && v.every(f);
const object = (shape) => (v) => !!v && typeof v === 'object' && !Array.isArray(v) &&
  Object.entries(shape).every(([name, f]) => f(Object.hasOwn(v, name) ? v[name] : undefined));
const WINDOW = { notBefore: opt(S), notAfter: opt(S) };
const OPTION = object({ identifier: S, title: opt(S), selected: BOOL });
const GROUP = object({ identifier: S, title: opt(S), kind: oneOf('picker', 'switches'), options: arrayOf(OPTION) });
const EVENTS = {
  CollaborationStarted: object({
    collaborationId: S, localIdentifier: S, title: S, initiatorHandle: S, initiatorName: opt(S), owner: S, universalLink: S,
    shareOptions: opt(object({ summary: opt(S), groups: arrayOf(GROUP) })), defaultAccess: opt(object({ duration: S })),
  }),
  IdentityAdded: object({ rootHash: ROOT, ...WINDOW }),
  IdentityRemoved: object({ rootHash: ROOT, account: opt(S) }),
  AccessGranted: object({
    rootHash: ROOT, account: S, proofRequestId: S, challengeId: S, publicKey: S, publicKeyIndex: U64,
    challenge: opt(S), signature: opt(S), inclusionHashes: opt(arrayOf(S)), ...WINDOW,
  }),
  AccessRevoked: object({ rootHash: ROOT, account: S, reason: S }),
  ProofRejected: object({ account: S, proofRequestId: S, challengeId: S, reason: S, rootHash: opt(ROOT) }),
  HighlightPosted: object({ kind: oneOf('change', 'membership', 'mention', 'persistence'), trigger: opt(S), mentionedRootHash: opt(ROOT), account: S }),
  AccessWindowChanged: object({ rootHash: ROOT, ...WINDOW }),
  AccessExpired: object({ rootHash: ROOT, account: opt(S), dueAt: S }),
};

function decode(event) {
  const refuse = (why) => new FoldError(`the event at ${event.position} is not a collaboration's event the domain reads: ${why}`);
  const shape = Object.hasOwn(EVENTS, event.type) ? EVENTS[event.type] : null;
  if (!shape) throw refuse(`unknown event type ${event.type}`);
  let data;
  try { data = JSON.parse(event.data); } catch { data = undefined; }
  if (!shape(data)) throw refuse(`its data is not a ${event.type}`);
  return data;
}

// CollaborationState.apply: identities by root hash (removed ones kept, for the record) and the
// accounts granted through them. `windows` is left out: it only names expiries' ids.
function apply(state, type, e) {
  const { identities, grants } = state;
  const identity = e.rootHash == null ? undefined : identities.get(e.rootHash);
  const bound = (v) => (v === undefined ? null : v);
  switch (type) {
    case 'IdentityAdded':
      identities.set(e.rootHash, { status: 'invited', account: null, notBefore: bound(e.notBefore), notAfter: bound(e.notAfter) });
      break;
    case 'IdentityRemoved':
      if (identity) identity.status = 'removed';
      break;
    case 'AccessWindowChanged':
      if (identity) Object.assign(identity, { notBefore: bound(e.notBefore), notAfter: bound(e.notAfter) });
      break;
    case 'AccessExpired':
      // The account stays, for the record; the identity grants nothing more.
      if (identity) identity.status = 'expired';
      if (e.account != null && grants.get(e.account) === e.rootHash) grants.delete(e.account);
      break;
    case 'AccessGranted': {
      const granted = identity || { notBefore: null, notAfter: null };
      Object.assign(granted, { status: 'granted', account: e.account });
      identities.set(e.rootHash, granted);
      grants.set(e.account, e.rootHash);
      break;
    }
    case 'AccessRevoked':
      if (grants.get(e.account) === e.rootHash) grants.delete(e.account);
      if (identity && identity.account === e.account) identity.account = null;
      break;
    default:   // ProofRejected, HighlightPosted: no member changes
  }
}

// VerifiedMembers.fold: the listed events (verified, rising) up to through, the start first and once.
function fold(events, through) {
  let state = null;
  for (const event of events) {
    if (event.position > through) continue;
    const data = decode(event);
    if (event.type === 'CollaborationStarted') {
      if (state) throw new FoldError(`a second start at ${event.position}`);
      state = { owner: data.owner, identities: new Map(), grants: new Map() };
    } else {
      if (!state) throw new FoldError(`an event at ${event.position} before the start`);
      apply(state, event.type, data);
    }
  }
  return state;
}

// VerifiedMembers.status: as the views read an identity at a time. Invited or granted with its
// window ended by then: expired (its AccessExpired comes at or after the end); granted with its
// window not begun: scheduled; otherwise what the events say.
function status(identity, at) {
  const end = recordedMicros(identity.notAfter), start = recordedMicros(identity.notBefore);
  const current = identity.status === 'invited' || identity.status === 'granted';
  if (current && end !== null && end <= at) return 'expired';
  if (identity.status === 'granted' && start !== null && start > at) return 'scheduled';
  return identity.status;
}

// statesAt (microseconds, with through): each state read as of that time, the answer not bounded
// at it: the members the views show "now" at a position, read at the browser's now.
export async function verifiedMembersAt(answer, {
  key, witnesses = [], collaboration, atMicros = null, through = null, timesRiseFrom = 1, statesAt = null,
} = {}) {
  const report = await verifyLookup(answer, { key, witnesses, collaboration, atMicros, through, timesRiseFrom });
  const bounded = atMicros === null || atMicros === undefined ? null : BigInt(atMicros);
  const at = bounded ?? (statesAt === null ? null : BigInt(statesAt));
  const last = bounded !== null ? report.recordedThrough : through ?? report.revisionSize;
  const state = fold(report.events, last);
  if (!state) return { report, through: last, owner: null, members: [] };
  const hashes = [...state.identities.keys()].sort();   // base64 is ASCII: code unit order is Swift's
  const members = hashes.map((rootHash) => {
    const identity = state.identities.get(rootHash);
    return {
      rootHash, state: at === null ? identity.status : status(identity, at),
      account: identity.account, notBefore: identity.notBefore, notAfter: identity.notAfter,
    };
  });
  return { report, through: last, owner: state.owner, members };
}
