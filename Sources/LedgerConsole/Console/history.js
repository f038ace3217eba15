// A collaboration's history read as sentences: one per event type, each row with the event as
// the API returned it behind a "raw event" disclosure (base64 keys, challenges and inclusion
// hashes belong there, not in the sentence).
//
// Contract: eventParts(event) is pure (no DOM; node can test it) and reads every field
// defensively: an event's data may lack fields (older events), carry null (an erased personal
// value) or come from a type this console does not know yet (then "<type> event"). The events
// are History.Entry (Sources/LedgerWire/Views.swift): {position, collaborationId, version, type,
// time, actor, data}; their data are the payloads of Sources/LedgerDomain/CollaborationEvents.swift
// with accounts and personal values as Disclosure shows them ("erased:psn-…" or null once erased).
import { el, cssName, optional, time, personal } from './dom.js';

// A part of a sentence: a plain string, or {kind, text, …} for what the page marks up:
//   hash (a root hash shortened; full: the whole base64), time (datetime: the RFC 3339 text),
//   erased (a personal value erased: null in the event), erased-account ("erased:psn-…").
const isText = (v) => typeof v === 'string' && v !== '';

// "+Dnkn…" from a base64 root hash: enough to tell a collaboration's identities apart at a glance;
// the whole hash stays in the part (the page's tooltip) and in the raw event.
export function shortHash(h) { return h.length > 8 ? h.slice(0, 5) + '…' : h; }

const hash = (h) => isText(h) ? { kind: 'hash', text: shortHash(h), full: h } : '(unknown)';

function account(a) {
  if (a === null) return { kind: 'erased', text: '(erased)' };
  if (!isText(a)) return 'an unknown account';
  if (a.startsWith('erased:')) return { kind: 'erased-account', text: a };
  return a;
}
// "bob's device": a possessive only for a plain name, "a device of …" for an erased one.
const devicesOf = (a) => typeof account(a) === 'string' && isText(a) ? [a + "'s device"] : ['a device of ', account(a)];
const by = (actor) => isText(actor) ? [' by ', account(actor)] : [];
// A reason code as words: "identity_removed" → "identity removed".
const words = (v) => String(v).replace(/[_-]+/g, ' ').replace(/([a-z])([A-Z])/g, (_, a, b) => a + ' ' + b.toLowerCase());

// "11:47:15 UTC" from "2026-11-25T11:47:15.123456Z" (the time column has the whole moment).
export function timeOfDay(iso) {
  const m = isText(iso) && /T(\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:?\d\d)?$/.exec(iso);
  if (!m) return isText(iso) ? iso : 'an unknown time';
  return m[1] + (m[2] === 'Z' ? ' UTC' : m[2] ? ' ' + m[2] : '');
}
// "2026-12-01 10:00 UTC" from "2026-12-01T10:00:00Z" (seconds kept when not zero).
export function moment(iso) {
  const m = isText(iso) && /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)(?::(\d\d))?(?:\.\d+)?(Z|[+-]\d\d:?\d\d)?$/.exec(iso);
  if (!m) return isText(iso) ? iso : 'an unknown time';
  return `${m[1]} ${m[2]}${m[3] && m[3] !== '00' ? ':' + m[3] : ''}${m[4] === 'Z' ? ' UTC' : m[4] ? ' ' + m[4] : ''}`;
}
const at = (iso) => isText(iso) ? { kind: 'time', text: timeOfDay(iso), datetime: iso } : 'an unknown time';
// A moment as a part: "2026-12-01 10:00 UTC" in a <time>.
export const when = (iso) => isText(iso) ? { kind: 'time', text: moment(iso), datetime: iso } : 'an unknown time';

// An access window (notBefore/notAfter, absent in events older than windows) as parts: "from …
// until …", either side left out when absent; null when neither is there. The sentences and the
// members table (members.js, through partNodes) both show it.
export function accessWindow(notBefore, notAfter) {
  if (isText(notBefore) && isText(notAfter)) return ['from ', when(notBefore), ' until ', when(notAfter)];
  if (isText(notAfter)) return ['until ', when(notAfter)];
  if (isText(notBefore)) return ['from ', when(notBefore)];
  return null;
}
// "; access until …" after an invitation or a grant that carries a window, nothing otherwise.
const windowSuffix = (d) => { const w = accessWindow(d.notBefore, d.notAfter); return w ? ['; access ', ...w] : []; };
// A window set anew: "to 2026-12-01 10:00 UTC – 2026-12-08 10:00 UTC", "to end at …", "to start at … (no end)".
const range = (d) => !isText(d.notBefore) ? ['to end at ', when(d.notAfter)]
  : !isText(d.notAfter) ? ['to start at ', when(d.notBefore), ' (no end)'] : ['to ', when(d.notBefore), ' – ', when(d.notAfter)];
// A due time beside the moment recorded: its time of day when on the same day, else the whole moment.
const sameDay = (a, b) => isText(a) && isText(b) && a.slice(0, 10) === b.slice(0, 10) && /Z$/.test(a) && /Z$/.test(b);
const due = (iso, recorded) => !isText(iso) ? 'an unknown time'
  : { kind: 'time', text: sameDay(iso, recorded) ? timeOfDay(iso).replace(/ UTC$/, '') : moment(iso), datetime: iso };
// "bob's access", "the access of erased:psn-…", "access" (no account had proved it).
function accessOf(d) {
  if (!('account' in d) || d.account === undefined) return ['access'];
  const a = account(d.account);
  return typeof a === 'string' && isText(d.account) ? [d.account + "'s access"] : ['the access of ', a];
}

// One sentence per event type, as parts, in the timeline's lane order (EVENT_TYPES). Unknown
// types: "<type> event".
const sentences = {
  CollaborationStarted: (d, e) => {
    const owner = 'owner' in d ? account(d.owner) : isText(e.actor) ? e.actor : 'someone';
    const title = d.title === null ? [' (title ', { kind: 'erased', text: 'erased' }, ')'] : isText(d.title) ? [` “${d.title}”`] : [];
    return [owner, ' started the collaboration', ...title];
  },
  IdentityAdded: (d, e) => {
    const list = Array.isArray(d.rootHashes) ? d.rootHashes : [d.rootHash];
    if (list.length === 1) return ['identity ', hash(list[0]), ' added', ...by(e.actor), ...windowSuffix(d)];
    const hashes = [];
    list.forEach((h, i) => { if (i) hashes.push(', '); hashes.push(hash(h)); });
    return [`${list.length} identities added (`, ...hashes, ')', ...by(e.actor)];
  },
  IdentityRemoved: (d, e) => [
    'identity ', hash(d.rootHash), ' removed', ...by(e.actor),
    ...(d.account !== undefined && d.account !== null ? ['; access of ', account(d.account), ' revoked'] : [])],
  AccessGranted: (d, e) => [
    ...devicesOf(d.account), ' (',
    ...(Number.isInteger(d.publicKeyIndex) ? [`key ${d.publicKeyIndex} of `] : []), 'identity ', hash(d.rootHash),
    ') proved access at ', at(e.time),
    // Grants recorded before the verifiable log kept no challenge, signature or inclusion hashes.
    ...('challenge' in d ? [] : [' (its proof was not recorded)']), ...windowSuffix(d)],
  // The owner set a current identity's window anew: "devin set identity +Dnkn…'s window to A – B".
  AccessWindowChanged: (d, e) => {
    const who = isText(e.actor) && e.actor !== 'ledger' ? account(e.actor) : 'the owner';
    return isText(d.notBefore) || isText(d.notAfter)
      ? [who, ' set identity ', hash(d.rootHash), "'s window ", ...range(d)]
      : [who, ' lifted identity ', hash(d.rootHash), "'s window (no limit now)"];
  },
  // Access ended by its window, appended by the ledger at (or, after downtime, later than) dueAt:
  // "bob's access through identity +Dnkn… expired at 11:47:15 UTC (due 11:47:15)".
  AccessExpired: (d, e) => [
    ...accessOf(d), ' through identity ', hash(d.rootHash), ' expired at ', at(e.time),
    ...(isText(d.dueAt) ? [' (due ', due(d.dueAt, e.time), ')'] : []),
    ...(!('account' in d) || d.account === undefined ? ['; no account had proved it'] : [])],
  AccessRevoked: (d, e) => [
    'access of ', account(d.account), ' through identity ', hash(d.rootHash), ' revoked', ...by(e.actor),
    ...(isText(d.reason) ? [` (${words(d.reason)})`] : [])],
  ProofRejected: (d) => [
    'a proof by ', account(d.account), ...(isText(d.rootHash) ? [' for identity ', hash(d.rootHash)] : []), ' was rejected',
    ...(isText(d.reason) ? [`: ${words(d.reason)}`] : [])],
  HighlightPosted: (d) => {
    if (d.kind === 'mention') return [account(d.account), ' mentioned identity ', hash(d.mentionedRootHash)];
    const what = isText(d.trigger) ? d.trigger + (isText(d.kind) ? ` (${d.kind})` : '') : isText(d.kind) ? d.kind : 'of no kind';
    return [account(d.account), ' posted a highlight: ', what];
  },
};

// The event types this console knows (a sentence each), in the order the timeline draws their
// lanes; types not listed (newer than this console) follow there as they come.
export const EVENT_TYPES = Object.freeze(Object.keys(sentences));

// The sentence of a History.Entry, as parts.
export function eventParts(e) {
  const d = e && e.data && typeof e.data === 'object' && !Array.isArray(e.data) ? e.data : {};
  const type = e && isText(e.type) ? e.type : 'unknown';
  const sentence = Object.prototype.hasOwnProperty.call(sentences, type) ? sentences[type] : null;
  return sentence ? sentence(d, e || {}) : [`${type} event`];
}

const partText = (p) => typeof p === 'string' ? p : p.kind === 'erased-account' ? `${p.text} (erased)` : p.text;
// The sentence as plain text (the timeline's tooltips, tests).
export const sentenceText = (e) => eventParts(e).map(partText).join('');

// Parts as nodes: text nodes and <code>/<time>/<span> built with textContent only (an erased
// account as dom.js's personal() shows it everywhere).
export function partNodes(parts) {
  return parts.map((p) => {
    if (typeof p === 'string') return p;
    if (p.kind === 'hash') return el('code', { class: 'hash short-hash', title: p.full }, p.text);
    if (p.kind === 'time') return el('time', { datetime: p.datetime }, p.text);
    if (p.kind === 'erased-account') return personal(p.text);
    return el('span', { class: 'erased' }, p.text);
  });
}

// The history table's columns and a row of it: tr.history-row[data-type][data-position] with
// p.event-sentence (the sentence) and details.raw-event > summary "raw event" + pre (the event
// as the API returned it, JSON; the browser test opens it).
export const HISTORY_COLUMNS = ['Position', 'Time', 'Type', 'What happened'];
export function historyRow(e) {
  const raw = el('details', { class: 'raw-event' }, el('summary', {}, 'raw event'),
    el('pre', { class: 'raw-json' }, JSON.stringify(e, null, 2)));
  return el('tr', { class: 'history-row', 'data-type': e.type, 'data-position': e.position },
    el('td', { class: 'num' }, String(e.position)), el('td', {}, time(e.time)),
    el('td', { class: 'event-type type-' + cssName(e.type) }, optional(e.type)),
    el('td', { class: 'event-what' }, el('p', { class: 'event-sentence' }, partNodes(eventParts(e))), raw));
}
