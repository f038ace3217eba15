// One collaboration (#/collaborations/<id>): (a) its overview, (b) the timeline of its events,
// (c) its members now or at a picked moment, proven in the browser on request, (d) its history
// as sentences, a page at a time.
// Sections #overview, #timeline, #members, #history carry data-state (the browser test waits on it).
import { el, clear, setState, personal, optional, time, code, details } from './dom.js';
import { api, url, PAGE } from './api.js';
import { begin, heading, section, pagedTable, focusHeading, report, say } from './ui.js';
import { allHistory, drawTimeline } from './timeline.js';
import { membersPanel } from './members.js';
import { proofPanel } from './proven.js';
import { HISTORY_COLUMNS, historyRow } from './history.js';

export function showCollaboration(id) {
  const { main, live } = begin('collaboration', 'Collaboration');
  const h1 = heading('Collaboration', 'view-title');
  const overview = section('overview', 'Overview');
  overview.append(el('p', { class: 'section-error' }));
  const timeline = section('timeline', 'Timeline');
  const timelineBox = el('div', { class: 'timeline-wrap', id: 'timeline-box' });
  timeline.append(el('p', { class: 'help', id: 'timeline-help' },
    'Each mark is an event. Tab to a mark and press Enter (or click it) to see the members at that moment.'),
  el('p', { class: 'section-error' }), timelineBox);
  const members = section('members', 'Members');
  const hist = section('history', 'History');
  main.append(el('p', {}, el('a', { href: '#/collaborations', id: 'back-to-list' }, '← All collaborations')),
    h1, el('p', { class: 'collab-id' }, 'Collaboration ID ', code(id)), overview, timeline, members, hist);
  const base = '/v1/collaborations/' + encodeURIComponent(id);

  // (a) overview
  setState(overview, 'loading');
  api(base).then((c) => {
    if (!live()) return;
    clear(h1).append(el('span', { id: 'collab-title' }, personal(c.title)));
    const counts = c.memberCounts || {};
    overview.append(details([
      ['Local identifier', optional(c.localIdentifier), 'collab-local-id'],
      ['Owner', personal(c.owner), 'collab-owner'],
      ['Initiator handle', personal(c.initiatorHandle), 'collab-initiator-handle'],
      ['Initiator name', c.title === null ? personal(c.initiatorName) : optional(c.initiatorName), 'collab-initiator-name'],
      ['Started', time(c.startedAt), 'collab-started'],
      ['Members', `${counts.invited} invited, ${counts.granted} granted, ${counts.removed} removed` +
        (Number.isInteger(counts.expired) ? `, ${counts.expired} expired` : '') +
        (counts.scheduled ? `, ${counts.scheduled} scheduled` : ''), 'collab-counts'],
      ['Universal link', code(c.universalLink), 'collab-link'],
      ['Log position', optional(c.position), 'collab-position'],
    ]));
    document.title = `${c.title === null ? '(erased)' : c.title} · Participant Ledger console`;
    setState(overview, 'ready');
  }, (e) => { if (live()) { setState(overview, 'error'); report(e, overview); } });

  // (b) + (c): a moment is picked on the timeline ({atPosition, time, type}) or typed ({asOf});
  // the picked mark is marked (aria-pressed), then the members are read for it.
  const panel = membersPanel(members, { base, live, pick, onShown: () => proof.reset() });
  const proof = proofPanel(members, { collaboration: id, base, shown: panel.shown });
  function pick(next) {
    for (const m of timelineBox.querySelectorAll('.mark')) {
      const on = !!(next && next.atPosition && m.dataset.position === String(next.atPosition));
      m.classList.toggle('selected', on);
      m.setAttribute('aria-pressed', on ? 'true' : 'false');
    }
    panel.show(next);
  }

  // (d) history, paged: a sentence per event, the raw event behind a disclosure.
  pagedTable(hist, {
    name: 'history', label: 'History (log order)', live, empty: 'No events.',
    columns: HISTORY_COLUMNS,
    load: async (cursor) => {
      const r = await api(url(base + '/history', { limit: PAGE, cursor }));
      return { items: r.events, nextCursor: r.nextCursor };
    },
    row: historyRow,
  }).reload();

  // The timeline: every history page; the members then read at least up to its last event.
  setState(timeline, 'loading');
  setState(members, 'loading');
  allHistory(base).then(({ events, truncated }) => {
    if (!live()) return;
    panel.setKnownPosition(events.length ? Math.max(...events.map((e) => e.position)) : null);
    timelineBox.append(drawTimeline(events, (e) => {
      pick({ atPosition: e.position, time: e.time, type: e.type });
      say(`Picked ${e.type} at ${e.time}: members at log position ${e.position}.`);
    }));
    if (truncated) timelineBox.append(el('p', { class: 'help' }, `Only the first ${events.length} events are drawn.`));
    setState(timeline, 'ready');
  }, (e) => {
    if (!live()) return;
    setState(timeline, 'error');
    report(e, timeline);
  }).finally(() => { if (live()) panel.reload(); });
  focusHeading();
}
