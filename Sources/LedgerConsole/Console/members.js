// A collaboration's members now or at a moment: a time typed (asOf) or a timeline mark picked
// (atPosition). The browser test's contract: input#asof-input, button#asof-apply, button#asof-now,
// #members[data-moment] (the moment the shown rows are for: "now", the typed time or the picked
// mark's time), tr.member-row[data-account][data-state=invited|granted|scheduled|removed|expired]
// [data-not-before][data-not-after] > td.member-window > span.access-window.
import { el, personal, optional, time, code, cssName } from './dom.js';
import { api, url } from './api.js';
import { pagedTable } from './ui.js';
import { when, partNodes } from './history.js';

// A member's access window at the moment shown (at, in ms): its start only while still ahead
// ("from …"), its end as "until …" while ahead and "ended …" once past; "—" without a window.
function windowCell(m, at) {
  const start = Date.parse(m.notBefore), end = Date.parse(m.notAfter);
  const parts = [];
  if (Number.isFinite(start) && start > at) parts.push('from ', when(m.notBefore));
  if (Number.isFinite(end)) parts.push(parts.length ? ' ' : '', end > at ? 'until ' : 'ended ', when(m.notAfter));
  if (!parts.length) return optional(null);
  const state = Number.isFinite(end) && end <= at ? ' window-ended' : Number.isFinite(start) && start > at ? ' window-ahead' : '';
  return el('span', { class: 'access-window' + state }, partNodes(parts));
}
// The moment a page of members is for, in ms: now, the typed time or the picked mark's.
const momentMs = (m) => { const t = m ? Date.parse(m.asOf || m.time) : NaN; return Number.isFinite(t) ? t : Date.now(); };

// Fills the #members section. pick(moment) is what the form asks for (null: now; {asOf}: a typed
// time); the caller marks the timeline and then calls show(moment). Answers {show, reload, setKnownPosition}:
// setKnownPosition(p) makes the first page read at least up to log position p (minPosition), so
// the members are never older than the events already drawn. shown() is the answer whose first
// page the table shows: {moment ({asOf}, {atPosition, time} or null for now), position, members
// (that page's), nextCursor (its walk's next page, read at the same position)}; null before the
// first, or while a first page loads. onShown() runs as any page is asked (the proof shown is
// then for another answer).
export function membersPanel(members, { base, live, pick, onShown }) {
  let moment = null, knownPosition = null, shownAt = Date.now(), shown = null, firstLoads = 0;
  const asOf = el('input', { id: 'asof-input', type: 'text', inputmode: 'text', autocomplete: 'off', spellcheck: 'false',
    placeholder: '2026-11-25T03:43:43.332100Z', 'aria-describedby': 'asof-help' });
  const now = el('button', { type: 'button', id: 'asof-now' }, 'Now');
  const momentForm = el('form', { id: 'asof-form', class: 'inline-form' },
    el('label', { for: 'asof-input' }, 'Moment (RFC 3339 time)'), asOf,
    el('button', { type: 'submit', id: 'asof-apply' }, 'Show members at this moment'),
    now,
    el('p', { id: 'asof-help', class: 'help' }, 'For example 2026-11-25T03:43:43Z. Leave empty (or press Now) for the members now.'));
  members.append(momentForm);
  members.dataset.moment = 'now';
  const table = pagedTable(members, {
    name: 'members', label: 'Members now', live, empty: 'No members.',
    columns: ['Account', 'State', 'Invited at', 'Granted at', 'Access window', 'Identity root hash'],
    load: async (cursor) => {
      const m = moment, params = { limit: 200, cursor, minPosition: cursor ? null : knownPosition };
      const seq = cursor ? null : ++firstLoads;
      // Whatever the table shows next is another answer: the proof of this one no longer holds,
      // and until a first page loads there is none to prove (a failed one leaves none).
      if (!cursor) shown = null;
      onShown();
      if (m && m.atPosition) params.atPosition = m.atPosition;
      else if (m) params.asOf = m.asOf;
      const when = !m ? 'now' : m.atPosition ? `at ${m.time} (${m.type}, position ${m.atPosition})` : `as of ${m.asOf}`;
      const r = await api(url(base + '/members', params));
      shownAt = momentMs(m);
      if (seq === firstLoads) {   // a first page, and no first page asked since
        shown = { moment: m, position: r.position, members: r.members, nextCursor: r.nextCursor || null };
      }
      return { items: r.members, nextCursor: r.nextCursor, caption: `Members ${when} (log position ${r.position})`,
        attrs: { moment: m ? (m.asOf || m.time) : 'now' }, announce: `Members ${when}.` };
    },
    // Each state has its own style (not colour alone: expired is italic, its row shaded; scheduled,
    // a grant whose window has not started, italic with a dashed outline).
    row: (m) => el('tr', {
      class: 'member-row', 'data-account': m.accountId || '', 'data-state': m.state,
      'data-not-before': m.notBefore || '', 'data-not-after': m.notAfter || '',
    },
      el('td', { class: 'member-account' }, m.accountId === undefined ? optional(null) : personal(m.accountId)),
      el('td', { class: 'member-state state-' + cssName(m.state) }, optional(m.state)),
      el('td', {}, time(m.invitedAt)), el('td', {}, time(m.grantedAt)),
      el('td', { class: 'member-window' }, windowCell(m, shownAt)), el('td', {}, code(m.rootHash))),
  });
  momentForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const v = asOf.value.trim();
    pick(v ? { asOf: v } : null);
  });
  now.addEventListener('click', () => pick(null));
  return {
    show(next) {
      moment = next;
      asOf.value = next ? (next.asOf || next.time) : '';
      table.reload();
    },
    reload: () => table.reload(),
    setKnownPosition(p) { knownPosition = p; },
    shown: () => shown,
  };
}
