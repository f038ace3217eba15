// DOM helpers shared by every view. Contract: every value from the API reaches the page as a
// text node or an attribute value (never through innerHTML), because titles, handles and event
// data are user input. Nothing here touches the DOM when imported (node can load it to test).

export const SVG_NS = 'http://www.w3.org/2000/svg';

export const $ = (id) => document.getElementById(id);

// Sets attrs (false/null/undefined skipped, true → empty attribute) and appends children, nested
// arrays flattened; a child that is not a Node becomes a text node.
export function build(node, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v === null || v === undefined) continue;
    node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}
export const el = (tag, attrs, ...kids) => build(document.createElement(tag), attrs, kids);
export const svg = (tag, attrs, ...kids) => build(document.createElementNS(SVG_NS, tag), attrs, kids);
export const clear = (node) => { node.replaceChildren(); return node; };
// A value made safe for a class name (event types, states and statuses come from the API).
export const cssName = (s) => String(s).replace(/[^A-Za-z0-9_-]/g, '_');

// A personal value: null means erased; an account "erased:psn-…" is shown as the API gives it.
export function personal(v) {
  if (v === null || v === undefined) return el('span', { class: 'erased' }, '(erased)');
  const s = String(v);
  if (s.startsWith('erased:')) return el('span', { class: 'erased-account' }, s, ' ', el('span', { class: 'erased' }, '(erased)'));
  return document.createTextNode(s);
}
// A value that may simply be absent (not erased).
export const optional = (v) => (v === null || v === undefined || v === '')
  ? el('span', { class: 'none', 'aria-label': 'none' }, '—') : document.createTextNode(String(v));
export const time = (v) => v ? el('time', { datetime: v }, v) : optional(v);
export const code = (v) => v ? el('code', { class: 'hash' }, v) : optional(v);
export const collabLink = (id, label) => el('a', { href: '#/collaborations/' + encodeURIComponent(id) }, label || id);

export function details(pairs) {   // [[term, node, id?], …] → <dl>
  return el('dl', { class: 'details' }, pairs.map(([t, d, id]) => [el('dt', {}, t), el('dd', { id }, d)]));
}
// data-state="loading|ready|error" is the contract the browser test waits on; aria-busy follows it.
export function setState(node, state) {
  node.dataset.state = state;
  node.setAttribute('aria-busy', state === 'loading' ? 'true' : 'false');
}
