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
//   - A broken link throws LinkError (link.js); an event the domain would not read (its data
//     naming a member twice in one object too), a second start or an event before the start throws
//     FoldError (its link: fold).
import { b64decode, wellFormed } from './note.js';
import { recordedMicros } from './times.js';
import { repeatedName } from './json.js';
import { verifyLookup } from './lookup.js';

// Not a link of the proof (every one held): the events themselves do not fold. link names it
// for a caller that shows e.link.
export class FoldError extends Error {
  constructor(message) { super(message); this.name = 'FoldError'; this.link = 'fold'; }
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
  const repeated = data === undefined ? undefined : repeatedName(event.data);
  if (repeated !== undefined) throw refuse(`its data names ${JSON.stringify(repeated)} twice in one object`);
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
