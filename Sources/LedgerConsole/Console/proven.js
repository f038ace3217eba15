// Members proven in this browser (#proof, inside #members): the collaboration's lookup
// (GET /v1/audit/lookup) checked link by link with the verifier key the auditor types, never one
// the server sends (verified.js: signature, revision record, the key's listing under the index
// root, each listed leaf's inclusion, the time bound), its events folded with the domain's rules,
// and the result compared with every page of the members the server shows for the same moment.
// The mark says "verified" only when every link holds and the two agree; otherwise it names the
// link that failed. Contract (the browser test's): form#proof-form > input#proof-key,
// textarea#proof-witnesses, button#proof-run; #proof[data-state=idle|loading|ready|error]
// [data-verified=true|false][data-link] > p#proof-mark, and when verified #proof-size (the
// checkpoint's size), #proof-cosigners, #proof-through (the last position folded).
import { el, clear, setState, code } from './dom.js';
import { api, url, ApiError } from './api.js';
import { describe } from './ui.js';
import { verifiedMembersAt, parseRFC3339Micros } from './verified.js';

const KEY = 'ledger-console-verifier-key', WITNESSES = 'ledger-console-witness-keys';
const remembered = (name) => { try { return localStorage.getItem(name) || ''; } catch { return ''; } };
const remember = (name, value) => { try { localStorage.setItem(name, value); } catch { /* private mode: not kept */ } };

// moment() → what #members shows: {asOf} (a typed time), {atPosition, time} (a picked mark) or
// {position} (now: the position the shown answer stands at); null before the first answer.
export function proofPanel(members, { collaboration, base, moment }) {
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
    const mine = ++request;
    remember(KEY, key.value.trim());
    remember(WITNESSES, witnesses.value.trim());
    clear(facts);
    show('loading', false, '', 'Checking the proof…');
    try {
      const result = await prove(collaboration, base, moment(), key.value.trim(), witnesses.value);
      if (mine !== request) return;
      const r = result.report;
      const when = result.at ? `as of ${result.at}` : `at log position ${result.through}`;
      show('ready', true, '', `✓ Verified in this browser: the ${result.members.length} member(s) ${when} are ` +
        `exactly those the log's events through position ${result.through} give, in a checkpoint of ${r.treeSize} ` +
        `events signed with your key` + (r.cosigners.length ? ` and cosigned by ${r.cosigners.map((c) => c.name).join(', ')}.` : '.'));
      facts.append(el('dl', { class: 'details' },
        el('dt', {}, 'Checkpoint'), el('dd', { id: 'proof-size' }, String(r.treeSize)),
        el('dt', {}, 'Signed by'), el('dd', {}, code(r.origin)),
        el('dt', {}, 'Cosigners'), el('dd', { id: 'proof-cosigners' }, cosigners(r)),
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

function cosigners(r) {
  const names = r.cosigners.map((c) => c.name);
  const unchecked = r.otherSignatures.filter((n) => !names.includes(n));
  return (names.length ? names.join(', ') : 'none checked') +
    (unchecked.length ? ` (not checked, no key given: ${unchecked.join(', ')})` : '');
}

// Fetches the lookup for the moment, verifies it, and compares the fold with the server's members
// at the same moment (every page). Refusals carry .link.
async function prove(collaboration, base, m, keyText, witnessText) {
  if (!m) throw refusal('moment', 'no members are shown yet');
  if (!keyText) throw refusal('key', 'type the log verifier key first');
  if (!globalThis.crypto || !crypto.subtle) {
    throw refusal('browser', 'this page is not a secure context (https, or http on localhost): the browser ' +
      'offers no WebCrypto to check signatures with; use ledger audit members');
  }
  const witnesses = witnessText.split('\n').map((s) => s.trim()).filter(Boolean);
  const at = m.asOf ? parseRFC3339Micros(m.asOf) : null;
  if (m.asOf && at === null) throw refusal('moment', `${m.asOf} is not an RFC 3339 time`);
  const through = m.asOf ? null : (m.atPosition || m.position);
  const answer = await api(url('/v1/audit/lookup', { collaboration, at: m.asOf || null }));
  const result = await verifiedMembersAt(answer, { key: keyText, witnesses, collaboration, atMicros: at, through });
  const shown = await serverMembers(base, m.asOf ? { asOf: m.asOf } : { atPosition: through });
  // At a typed time each state is read as of it; at a position, as the events left it; now, as
  // of now (the server's "now" is a moment later: a window ending between the two would differ).
  const proven = result.members.filter((x) => x.state !== 'removed');
  const differs = compare(proven, shown);
  if (differs) throw refusal('members', `the server's members differ from the proven ones: ${differs}`);
  return { ...result, members: proven, at: m.asOf || null };
}

async function serverMembers(base, params) {
  const all = [];
  let cursor = null;
  do {
    const r = await api(url(base + '/members', { ...params, limit: 1000, cursor }));
    all.push(...r.members);
    cursor = r.nextCursor || null;
  } while (cursor);
  return all;
}

// null when both list the same identities with the same states and windows; else what differs.
function compare(proven, shown) {
  const micros = (t) => t ? parseRFC3339Micros(t) : null;
  const line = (m) => `${m.state} ${micros(m.notBefore)} ${micros(m.notAfter)}`;
  const a = new Map(proven.map((m) => [m.rootHash, line(m)]));
  const b = new Map(shown.map((m) => [m.rootHash, line(m)]));
  for (const [hash, v] of a) if (b.get(hash) !== v) return `identity ${hash}: proven ${v}, shown ${b.get(hash) || 'absent'}`;
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
