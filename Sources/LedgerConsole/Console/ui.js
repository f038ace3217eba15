// The frame every view shares: the status and error regions, starting a view, sections and
// paged tables. Views never import each other; console.js routes between them.
import { $, el, clear, setState } from './dom.js';
import { ApiError, dropAccessToken } from './api.js';

let viewSeq = 0;                       // bumped per view: results for an older view are dropped
let signedOut = () => {};              // what a 401 leads to (console.js: the sign-in view)

// console.js sets what happens when the API answers 401: the access token is dropped (only it: a
// provider's ID token and renewal marker stay, for the renewal that may follow), then this runs
// with the message to show.
export function whenSignedOut(handler) { signedOut = handler; }

export function say(message) { $('status').textContent = message; }
export function clearMessages() { clear($('error')); say(''); }

export function describe(err) {
  if (!(err instanceof ApiError)) return String(err && err.message || err);
  const lead = err.status === 403 ? 'No access: ' : err.status === 401 ? 'Not signed in: ' : '';
  return lead + err.message + (err.status ? ` (${err.code}, HTTP ${err.status})` : '');
}

// Shows an error in the alert region (once per message) and in the section that failed.
export function report(err, section) {
  if (err instanceof ApiError && err.status === 401) { dropAccessToken(); signedOut(describe(err)); return; }
  const text = describe(err);
  const box = $('error');
  if (![...box.children].some((p) => p.textContent === text)) box.append(el('p', {}, text));
  if (section) {
    const slot = section.querySelector('.section-error');
    if (slot) slot.textContent = text;
  }
}

// Starts a view: clears <main> and the messages, names the view (main[data-view], the title,
// the nav's aria-current), and answers live() (false once another view has started).
export function begin(view, title) {
  const seq = ++viewSeq;
  const main = $('main');
  clear(main);
  clearMessages();
  main.dataset.view = view;
  document.title = title + ' · Participant Ledger console';
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.getAttribute('href') === '#/' + view) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  return { main, live: () => seq === viewSeq };
}

export const heading = (text, id) => el('h1', { id: id || 'view-title', tabindex: '-1' }, text);
export const section = (id, title) => el('section', { id, 'aria-labelledby': id + '-h' }, el('h2', { id: id + '-h' }, title));
export function focusHeading() { const h = $('view-title'); if (h) h.focus({ preventScroll: true }); }

// A section with a table, "First page" / "Next page" buttons (following nextCursor) and an
// error slot. load(cursor) → {items, nextCursor, caption?, attrs?, announce?} (attrs: data-*
// of the section, set with the rows); row(item) → <tr>. Element ids: #<name>-table,
// #<name>-first, #<name>-next, #<name>-page, #<name>-caption (the browser test's contract).
export function pagedTable(section, { name, label, columns, load, row, empty, live }) {
  const caption = el('caption', { id: name + '-caption' }, label);
  const tbody = el('tbody');
  const table = el('table', { id: name + '-table' }, caption,
    el('thead', {}, el('tr', {}, columns.map((c) => el('th', { scope: 'col' }, c)))), tbody);
  const wrap = el('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-labelledby': name + '-caption' }, table);
  const first = el('button', { type: 'button', id: name + '-first', disabled: true }, 'First page');
  const next = el('button', { type: 'button', id: name + '-next', disabled: true }, 'Next page');
  const info = el('span', { class: 'page-info', id: name + '-page' });
  section.append(el('p', { class: 'section-error' }), wrap, el('div', { class: 'pager' }, first, next, info));
  let page = 1, nextCursor = null, request = 0;

  async function show(cursor, n) {
    const mine = ++request;
    setState(section, 'loading');
    section.querySelector('.section-error').textContent = '';
    first.disabled = next.disabled = true;
    try {
      const r = await load(cursor);
      if (mine !== request || !live()) return;
      clear(tbody);
      for (const item of r.items) tbody.append(row(item));
      if (!r.items.length) tbody.append(el('tr', { class: 'empty' }, el('td', { colspan: columns.length }, empty)));
      caption.textContent = r.caption || label;
      if (r.attrs) Object.assign(section.dataset, r.attrs);
      if (r.announce) say(r.announce);
      page = n; nextCursor = r.nextCursor || null;
      next.disabled = !nextCursor; first.disabled = page === 1;
      info.textContent = `Page ${page}${nextCursor ? '' : ' (last)'}`;
      setState(section, 'ready');
    } catch (e) {
      if (mine !== request || !live()) return;
      clear(tbody);
      info.textContent = '';
      first.disabled = page === 1 && !cursor;
      setState(section, 'error');
      report(e, section);
    }
  }
  next.addEventListener('click', () => show(nextCursor, page + 1));
  first.addEventListener('click', () => show(null, 1));
  return { reload: () => show(null, 1) };
}
