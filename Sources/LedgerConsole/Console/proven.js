// Members proven in this browser (#proof, inside #members): the collaboration's lookup
// (GET /v1/audit/lookup) checked link by link with the verifier key the auditor types, never one
// the server sends (verified.js: signature, revision record, the key's listing under the index
// root, each listed leaf's inclusion, the time bound), its events folded with the domain's rules,
// and the fold compared with the members answer the table shows (its first page as shown, then
// the rest of its walk, read at the same position): each identity, its state and its window. The
// accounts and the invitation and grant times the table shows are the views', not compared.
// The mark says "verified" only when every link holds and the two agree; otherwise it names the
// link that failed. Contract (the browser test's): form#proof-form > input#proof-key,
// textarea#proof-witnesses, button#proof-run; #proof[data-state=idle|loading|ready|error]
// [data-verified=true|false][data-link] > p#proof-mark, and when verified #proof-size (the
// checkpoint's size), #proof-shard ("one database", or the shard's index first), #proof-cosigners
// (on shards, the top checkpoint's), #proof-through (the last position folded).
import { el, clear, setState, code } from './dom.js';
import { api, url, ApiError } from './api.js';
import { describe } from './ui.js';
import { verifiedMembersAt } from './verified.js';
import { parseRFC3339Micros } from './times.js';

const KEY = 'ledger-console-verifier-key', WITNESSES = 'ledger-console-witness-keys';
const remembered = (name) => { try { return localStorage.getItem(name) || ''; } catch { return ''; } };
const remember = (name, value) => { try { localStorage.setItem(name, value); } catch { /* private mode: not kept */ } };

// shown() → the members answer the table shows (membersPanel's shown()); reset() when it changes.
export function proofPanel(members, { collaboration, base, shown }) {
  const key = el('input', { id: 'proof-key', type: 'text', autocomplete: 'off', spellcheck: 'false',
    placeholder: 'ledger.example/log+29401678+AQYN…', value: remembered(KEY), 'aria-describedby': 'proof-help' });
  const witnesses = el('textarea', { id: 'proof-witnesses', rows: '2', spellcheck: 'false', placeholder: 'one witness key a line (optional)' });
  witnesses.value = remembered(WITNESSES);
  const run = el('button', { type: 'submit', id: 'proof-run' }, 'Verify these members in this browser');
  const mark = el('p', { id: 'proof-mark' });
  const facts = el('div', { class: 'proof-facts' });
  const box = el('div', { id: 'proof', role: 'status', 'aria-live': 'polite' }, mark, facts);
  const form = el('form', { id: 'proof-form', class: 'proof-form' },
    el('fieldset', {}, el('legend', {}, 'Proof'),
      el('label', { for: 'proof-key' }, 'Log verifier key'), key,
      el('label', { for: 'proof-witnesses' }, 'Witness keys'), witnesses, run,
      el('p', { id: 'proof-help', class: 'help' },
        'The key auditors check checkpoints with (ledger serve prints it). The proof is checked here, ' +
        'against this key alone, and compared with the members shown.')));
  members.append(form, box);

  let request = 0;
  function show(state, verified, link, text) {
    setState(box, state);
    box.dataset.verified = verified ? 'true' : 'false';
    box.dataset.link = link || '';
    mark.textContent = text;
  }
  show('idle', false, '', 'Not checked yet.');
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    // The texts as submitted: the fields may change while the proof is checked.
    const mine = ++request, keyText = key.value.trim(), witnessText = witnesses.value;
    remember(KEY, keyText);
    remember(WITNESSES, witnessText.trim());
    clear(facts);
    show('loading', false, '', 'Checking the proof…');
    try {
      const result = await prove(collaboration, base, shown(), keyText, witnessText);
      if (mine !== request) return;
      const r = result.report;
      const now = !result.moment;
      const when = result.at ? `as of ${result.at}` : now ? 'now' : `at log position ${result.through}`;
      const sharded = r.shard !== null && r.shard !== undefined;
      show('ready', true, '', `✓ Verified in this browser: the ${result.members.length} identities ${when}, their ` +
        `states and windows, are exactly those the log's events through position ${result.through} give, in a ` +
        (sharded ? `checkpoint of ${r.treeSize} events of shard ${r.shard}, recorded in the top log's checkpoint of ` +
          `${r.topTreeSize} entries signed with the key ${keyName(keyText)}` :
          `checkpoint of ${r.treeSize} events signed with the key ${keyName(keyText)}`) +
        (r.cosigners.length ? `, ${sharded ? 'that checkpoint ' : ''}cosigned by ${r.cosigners.map((c) => c.name).join(', ')}.` : '.') +
        (now && result.position > result.through ? ` The members shown stand at position ${result.position}: ` +
          `an event after ${result.through} is not in this proof.` : ''));
      facts.append(el('dl', { class: 'details' },
        el('dt', {}, 'Checkpoint'), el('dd', { id: 'proof-size' }, String(r.treeSize)),
        el('dt', {}, 'Signed by'), el('dd', {}, code(r.origin)),
        el('dt', {}, 'Shard'), el('dd', { id: 'proof-shard' }, r.shard === null || r.shard === undefined ? 'one database' :
          `${r.shard} (in the top log of ${r.topTreeSize} entries, ${r.topOrigin}, and its partition map)`),
        el('dt', {}, 'Cosigners'), el('dd', { id: 'proof-cosigners' }, cosigners(r, witnessNames(witnessText))),
        el('dt', {}, 'Folded through'), el('dd', { id: 'proof-through' }, String(result.through)),
        el('dt', {}, 'Index revision'), el('dd', {}, `positions 1 … ${r.revisionSize}, recorded at ${r.recordPosition}`)));
    } catch (e) {
      if (mine !== request) return;
      const [link, text] = named(e);
      show('error', false, link, `✗ Not verified: ${link}: ${text}`);
    }
  });
  // A new moment: the mark was for the old one.
  return { reset() { request++; clear(facts); show('idle', false, '', 'Not checked yet.'); } };
}

// A key text's name and id, as the mark names the key it checked with (name+id+key).
const keyName = (text) => text.trim().split('+').slice(0, 2).join('+');
const witnessNames = (text) => text.split('\n').map((s) => s.trim()).filter(Boolean).map((s) => s.split('+')[0]);

// The witnesses whose cosignatures verified; those given whose line is absent or does not verify;
// and the other lines, whose keys were not given.
function cosigners(r, given) {
  const names = r.cosigners.map((c) => c.name);
  const failed = given.filter((n) => !names.includes(n));
  const unchecked = r.otherSignatures.filter((n) => !names.includes(n) && !given.includes(n));
  return (names.length ? names.join(', ') : 'none checked') +
    (failed.length ? ` (no cosignature that verifies: ${failed.join(', ')})` : '') +
    (unchecked.length ? ` (not checked, no key given: ${unchecked.join(', ')})` : '');
}

// Fetches the lookup for the answer the table shows, verifies it, and compares the fold with that
// answer: its first page as shown, then the rest of its walk (read at the same position).
// Refusals carry .link.
async function prove(collaboration, base, shown, keyText, witnessText) {
  if (!shown) throw refusal('moment', 'no members are shown yet');
  if (!keyText) throw refusal('key', 'type the log verifier key first');
  if (!globalThis.crypto || !crypto.subtle) {
    throw refusal('browser', 'this page is not a secure context (https, or http on localhost): the browser ' +
      'offers no WebCrypto to check signatures with; use ledger audit members');
  }
  const witnesses = witnessText.split('\n').map((s) => s.trim()).filter(Boolean);
  const m = shown.moment, options = { key: keyText, witnesses, collaboration };
  const query = { collaboration };
  if (m && m.asOf) {
    // A typed time: the answer bounded at it, each state read as of it.
    options.atMicros = parseRFC3339Micros(m.asOf);
    if (options.atMicros === null) throw refusal('moment', `${m.asOf} is not an RFC 3339 time`);
    query.at = m.asOf;
  } else if (m) {
    // A picked mark: its position (the revision must cover it), states as the events leave them.
    options.through = m.atPosition;
    if (!Number.isSafeInteger(options.through) || options.through < 1) {
      throw refusal('moment', `the picked mark has no log position (${options.through})`);
    }
  } else {
    // Now: the events through the newest revision (the mark names it; an idle ledger's last event
    // is often a revision's own record, which no revision covers), states read as of the
    // browser's now (the views' were read a moment earlier: a window ending between the two
    // shows as a difference, never as a pass).
    options.statesAt = BigInt(Date.now()) * 1000n;
  }
  const answer = await lookup(query);
  const result = await verifiedMembersAt(answer, options);
  const listed = await walk(base, shown);
  // The views list no removed identity.
  const proven = result.members.filter((x) => x.state !== 'removed');
  const differs = compare(proven, listed);
  if (differs) throw refusal('members', `the members shown differ from the proven ones: ${differs}`);
  return { ...result, members: proven, at: m && m.asOf ? m.asOf : null, moment: m, position: shown.position };
}

// The lookup's pages merged into one answer, as LedgerClient.lookup merges them: each next page
// asked under the first one's checkpoint (size) after the last position listed (next). Nothing
// here is trusted: the merged answer is verified as one, and a page that does not belong shows
// there as a broken link.
async function lookup(query) {
  const merged = await api(url('/v1/audit/lookup', query));
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  for (let pages = 1; merged.next != null; pages++) {
    if (pages >= 100) throw refusal('page', 'the lookup runs past 100 pages (a million events): use ledger audit members');
    const size = merged.record && merged.record.inclusion && merged.record.inclusion.treeSize;
    const page = await api(url('/v1/audit/lookup', { ...query, size, after: merged.next }));
    if (!same(page.record, merged.record) || page.proof !== merged.proof || page.checkpoint !== merged.checkpoint ||
        !Array.isArray(page.events) || !Array.isArray(page.positions) || !(page.positions[0] > merged.next)) {
      throw refusal('page', `the page after ${merged.next} is not under the first page's revision, or lists nothing after it`);
    }
    merged.events = merged.events.concat(page.events);
    merged.positions = merged.positions.concat(page.positions);
    merged.next = page.next;
  }
  return merged;
}

// The shown answer's members: its first page, then each next page of its walk (at most 1,000).
async function walk(base, shown) {
  const all = [...shown.members];
  let cursor = shown.nextCursor;
  for (let pages = 1; cursor; pages++) {
    if (pages >= 1000) throw refusal('members', 'the members shown run past 1,000 pages');
    const r = await api(url(base + '/members', { limit: 200, cursor }));
    if (r.position !== shown.position) throw refusal('members', `a next page stands at ${r.position}, not ${shown.position}`);
    all.push(...r.members);
    cursor = r.nextCursor || null;
  }
  return all;
}

// null when both list the same identities, each once, with the same state and window; else what
// differs. A window bound that does not read as an RFC 3339 time differs from every other; bounds
// are compared at the millisecond nearest, as the API writes times (APIJSON.time; the events
// hold microseconds).
const nearestMilli = (micros) => (micros + (micros >= 0n ? 500n : -500n)) / 1000n;
function compare(proven, shown) {
  const bound = (t) => {
    if (t === null || t === undefined) return 'none';
    const micros = parseRFC3339Micros(t);
    return micros === null ? `unreadable ${JSON.stringify(t)}` : `${nearestMilli(micros)} ms`;
  };
  const line = (m) => `${m.state}, from ${bound(m.notBefore)} until ${bound(m.notAfter)}`;
  const a = new Map(proven.map((m) => [m.rootHash, line(m)]));
  const b = new Map(shown.map((m) => [m.rootHash, line(m)]));
  if (b.size !== shown.length) return 'an identity is listed twice';
  for (const [hash, v] of a) if (b.get(hash) !== v) return `identity ${hash}: proven ${v}; shown ${b.get(hash) || 'absent'}`;
  for (const [hash, v] of b) if (!a.has(hash)) return `identity ${hash}: shown ${v}, absent from the proof`;
  return null;
}

// A failure as [link, sentence]: a broken link names itself (LinkError, FoldError's 'fold'); the
// ledger refusing the lookup is 'lookup' (no revision under the checkpoint yet, no access…); a
// key that does not parse is 'key'. LinkError's message already leads with its link.
function named(e) {
  if (e && e.link) return [e.link, e.reason || String(e.message).replace(e.link + ': ', '')];
  if (e instanceof ApiError) return ['lookup', describe(e)];
  if (e && e.name === 'NoteError') return ['key', e.message];
  return ['browser', String(e && e.message || e)];
}

function refusal(link, message) {
  const e = new Error(message);
  e.link = link;
  return e;
}
