// The access audit (#/audit): who gained and lost access when, filtered, a page at a time, and
// the whole filtered record as a CSV or NDJSON download.
import { $, el, setState, personal, optional, time, code, cssName, collabLink } from './dom.js';
import { api, url, PAGE } from './api.js';
import { begin, heading, section, pagedTable, focusHeading, report, say } from './ui.js';

export function showAudit() {
  const { main, live } = begin('audit', 'Access audit');
  const field = (id, label, placeholder) => el('div', { class: 'field' },
    el('label', { for: id }, label), el('input', { id, type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder }));
  const form = el('form', { id: 'audit-form' },
    el('fieldset', {}, el('legend', {}, 'Filters'),
      el('div', { class: 'fields' },
        field('audit-account', 'Account'), field('audit-collaboration', 'Collaboration ID'),
        field('audit-from', 'From (RFC 3339 time)', '2026-11-01T00:00:00Z'),
        field('audit-to', 'To (RFC 3339 time)', '2026-12-01T00:00:00Z')),
      el('button', { type: 'submit', id: 'audit-apply' }, 'Apply filters')));
  const downloads = el('div', { class: 'downloads', id: 'audit-downloads' },
    el('button', { type: 'button', id: 'audit-csv' }, 'Download CSV'),
    el('button', { type: 'button', id: 'audit-ndjson' }, 'Download NDJSON'),
    el('span', { class: 'help' }, 'Downloads hold every record matching the filters in the form.'));
  const results = section('audit', 'Records');
  main.append(heading('Access audit'), form, downloads, results);
  const filters = () => ({
    account: $('audit-account').value.trim(), collaboration: $('audit-collaboration').value.trim(),
    from: $('audit-from').value.trim(), to: $('audit-to').value.trim(),
  });
  let applied = filters();
  const table = pagedTable(results, {
    name: 'audit', label: 'Access changes', live, empty: 'No records match.',
    columns: ['Position', 'Time', 'Collaboration', 'Account', 'Change', 'Reason', 'Actor', 'Identity root hash'],
    load: async (cursor) => {
      const r = await api(url('/v1/audit/access', { ...applied, limit: PAGE, cursor }));
      return { items: r.records, nextCursor: r.nextCursor };
    },
    // An expiry (change "expired") is recorded at or after its dueAt: the reason column says when it was due.
    row: (a) => el('tr', { class: 'audit-row', 'data-account': a.accountId, 'data-change': a.change },
      el('td', { class: 'num' }, String(a.position)), el('td', {}, time(a.time)),
      el('td', {}, collabLink(a.collaborationId)), el('td', { class: 'audit-account' }, personal(a.accountId)),
      el('td', { class: 'change-' + cssName(a.change) }, a.change),
      el('td', {}, a.dueAt ? ['window ended, due ', time(a.dueAt)] : optional(a.reason)),
      el('td', {}, optional(a.actor)), el('td', {}, code(a.rootHash))),
  });
  form.addEventListener('submit', (ev) => { ev.preventDefault(); applied = filters(); table.reload(); });
  $('audit-csv').addEventListener('click', () => download('csv', 'text/csv', filters(), downloads));
  $('audit-ndjson').addEventListener('click', () => download('ndjson', 'application/x-ndjson', filters(), downloads));
  table.reload();
  focusHeading();
}

// Fetches the export with the token (a plain link could not send it) and saves the Blob.
async function download(format, accept, params, box) {
  const name = 'access-audit.' + format;
  setState(box, 'loading');
  say(`Preparing ${name}…`);
  try {
    const res = await api(url('/v1/audit/access', { ...params, format }), { raw: true, accept });
    const blob = await res.blob();
    const href = URL.createObjectURL(blob);
    const a = el('a', { href, download: name, class: 'hidden-link' });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(href), 10000);
    say(`Downloaded ${name} (${blob.size} bytes).`);
    setState(box, 'ready');
  } catch (e) {
    say('');
    setState(box, 'error');
    report(e);
  }
}
