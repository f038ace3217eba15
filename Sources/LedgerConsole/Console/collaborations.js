// The collaborations list (#/collaborations): every collaboration the token may see, searched
// by local identifier or title, a page at a time.
import { el, personal, optional, time, code, collabLink } from './dom.js';
import { api, url, PAGE } from './api.js';
import { begin, heading, section, pagedTable, focusHeading } from './ui.js';

export function showCollaborations() {
  const { main, live } = begin('collaborations', 'Collaborations');
  const search = el('input', { id: 'collab-search', type: 'search', autocomplete: 'off' });
  const form = el('form', { id: 'collab-search-form', role: 'search', class: 'inline-form' },
    el('label', { for: 'collab-search' }, 'Search by local identifier or title'),
    search, el('button', { type: 'submit', id: 'collab-search-submit' }, 'Search'));
  const list = section('collabs', 'Results');
  main.append(heading('Collaborations'), form, list);
  let q = '';
  const table = pagedTable(list, {
    name: 'collab', label: 'Collaborations', live, empty: 'No collaborations.',
    columns: ['Local identifier', 'Title', 'Owner', 'Started', 'Invited', 'Granted', 'Removed', 'Expired', 'Collaboration ID'],
    load: async (cursor) => {
      const r = await api(url('/v1/collaborations', { q, limit: PAGE, cursor }));
      return { items: r.collaborations, nextCursor: r.nextCursor };
    },
    row: (c) => {
      const counts = c.memberCounts || {};
      return el('tr', { class: 'collab-row', 'data-id': c.collaborationId },
        el('td', {}, collabLink(c.collaborationId, c.localIdentifier || 'open')),
        el('td', { class: 'collab-title' }, personal(c.title)),
        el('td', {}, personal(c.owner)),
        el('td', {}, time(c.startedAt)),
        el('td', { class: 'num' }, optional(counts.invited)), el('td', { class: 'num' }, optional(counts.granted)),
        el('td', { class: 'num' }, optional(counts.removed)), el('td', { class: 'num' }, optional(counts.expired)),
        el('td', {}, code(c.collaborationId)));
    },
  });
  form.addEventListener('submit', (ev) => { ev.preventDefault(); q = search.value.trim(); table.reload(); });
  table.reload();
  focusHeading();
}
