// Participant Ledger: the auditor's read-only console (issue 31).
// Plain DOM, no framework, no build step. Every value from the API is written with
// textContent / setAttribute (never innerHTML): titles and handles are user input.
// The bearer token lives only in sessionStorage and is sent only to this origin.
'use strict';
(() => {
  // ---------------------------------------------------------------- constants and state
  const TOKEN_KEY = 'participant-ledger.console.token';
  const PAGE = 50;                    // rows per table page
  const TIMELINE_PAGE = 1000;         // history events per request when drawing the timeline
  const TIMELINE_MAX_PAGES = 20;      // at most 20,000 events are drawn
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const KNOWN_TYPES = ['CollaborationStarted', 'IdentityAdded', 'IdentityRemoved',
    'AccessGranted', 'AccessRevoked', 'ProofRejected', 'HighlightPosted'];
  let viewSeq = 0;                    // bumped per route: results for an older view are dropped

  // ---------------------------------------------------------------- DOM helpers
  const $ = (id) => document.getElementById(id);

  function build(node, attrs, children) {
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
  const el = (tag, attrs, ...kids) => build(document.createElement(tag), attrs, kids);
  const svg = (tag, attrs, ...kids) => build(document.createElementNS(SVG_NS, tag), attrs, kids);
  const clear = (node) => { node.replaceChildren(); return node; };
  const cssName = (s) => String(s).replace(/[^A-Za-z0-9_-]/g, '_');

  // A personal value: null means erased; an account "erased:psn-…" is shown as the API gives it.
  function personal(v) {
    if (v === null || v === undefined) return el('span', { class: 'erased' }, '(erased)');
    const s = String(v);
    if (s.startsWith('erased:')) return el('span', { class: 'erased-account' }, s, ' ', el('span', { class: 'erased' }, '(erased)'));
    return document.createTextNode(s);
  }
  // A value that may simply be absent (not erased).
  const optional = (v) => (v === null || v === undefined || v === '')
    ? el('span', { class: 'none', 'aria-label': 'none' }, '—') : document.createTextNode(String(v));
  const time = (v) => v ? el('time', { datetime: v }, v) : optional(v);
  const code = (v) => v ? el('code', { class: 'hash' }, v) : optional(v);
  const collabLink = (id, label) => el('a', { href: '#/collaborations/' + encodeURIComponent(id) }, label || id);

  function details(pairs) {   // [[term, node], …] → <dl>
    return el('dl', { class: 'details' }, pairs.map(([t, d, id]) => [el('dt', {}, t), el('dd', { id }, d)]));
  }
  function setState(node, state) {
    node.dataset.state = state;
    node.setAttribute('aria-busy', state === 'loading' ? 'true' : 'false');
  }

  // ---------------------------------------------------------------- token, status, errors
  function getToken() { try { return sessionStorage.getItem(TOKEN_KEY); } catch { return null; } }
  function setToken(t) { try { sessionStorage.setItem(TOKEN_KEY, t); } catch { /* storage off: nothing kept */ } }
  function dropToken() { try { sessionStorage.removeItem(TOKEN_KEY); } catch { /* ignore */ } }

  function say(message) { $('status').textContent = message; }
  function clearMessages() { clear($('error')); say(''); }

  function describe(err) {
    if (!(err instanceof ApiError)) return String(err && err.message || err);
    const lead = err.status === 403 ? 'No access: ' : err.status === 401 ? 'Not signed in: ' : '';
    return lead + err.message + (err.status ? ` (${err.code}, HTTP ${err.status})` : '');
  }
  // Shows an error in the alert region (once per message) and in the section that failed.
  function report(err, section) {
    if (err instanceof ApiError && err.status === 401) { dropToken(); showSignIn(describe(err)); return; }
    const text = describe(err);
    const box = $('error');
    if (![...box.children].some((p) => p.textContent === text)) box.append(el('p', {}, text));
    if (section) {
      const slot = section.querySelector('.section-error');
      if (slot) slot.textContent = text;
    }
  }

  // ---------------------------------------------------------------- API
  class ApiError extends Error {
    constructor(status, code, message) { super(message); this.status = status; this.code = code; }
  }
  function url(path, params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
    const s = q.toString();
    return s ? `${path}?${s}` : path;
  }
  // GET with the bearer token. Answers JSON, or the Response itself when raw; API errors throw
  // ApiError with the API's own code and message. A 503 view_behind is retried twice.
  async function api(path, { raw = false, accept = 'application/json', token = getToken() } = {}) {
    for (let attempt = 0; ; attempt++) {
      const headers = { Accept: accept };
      if (token) headers.Authorization = 'Bearer ' + token;
      let res;
      try {
        res = await fetch(path, { headers, cache: 'no-store', credentials: 'omit' });
      } catch (e) {
        throw new ApiError(0, 'network', 'the ledger could not be reached (' + e.message + ')');
      }
      if (res.ok) return raw ? res : res.json();
      const err = await errorOf(res);
      if (err.status === 503 && err.code === 'view_behind' && attempt < 2) {
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      throw err;
    }
  }
  async function errorOf(res) {
    let code = 'http_' + res.status, message = res.statusText || 'request failed';
    try {
      const body = await res.json();
      if (body && body.error) { code = String(body.error.code || code); message = String(body.error.message || message); }
    } catch { /* not JSON */ }
    return new ApiError(res.status, code, message);
  }

  // ---------------------------------------------------------------- paged tables
  // A section with a table, "First page" / "Next page" buttons (following nextCursor) and an
  // error slot. load(cursor) → {items, nextCursor, caption?, attrs?, announce?} (attrs: data-*
  // of the section, set with the rows); row(item) → <tr>.
  function pagedTable(section, { name, label, columns, load, row, empty, live }) {
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

  // ---------------------------------------------------------------- views: frame and routing
  // Starts a view: clears <main> and the messages, names the view, and answers live() (false
  // once another view has started).
  function begin(view, title) {
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
  const heading = (text, id) => el('h1', { id: id || 'view-title', tabindex: '-1' }, text);
  const section = (id, title) => el('section', { id, 'aria-labelledby': id + '-h' }, el('h2', { id: id + '-h' }, title));

  function route() {
    const signedIn = !!getToken();
    $('nav').hidden = !signedIn;
    if (!signedIn) return showSignIn();
    const hash = location.hash || '';
    if (!hash.startsWith('#/')) { location.replace('#/collaborations'); return; }
    const [page, rawId] = hash.slice(2).split('/');
    if (page === 'collaborations' && rawId) {
      let id;
      try { id = decodeURIComponent(rawId); } catch { id = rawId; }
      return showCollaboration(id);
    }
    if (page === 'collaborations') return showCollaborations();
    if (page === 'audit') return showAudit();
    if (page === 'health') return showHealth();
    location.replace('#/collaborations');
  }
  function focusHeading() { const h = $('view-title'); if (h) h.focus({ preventScroll: true }); }

  // ---------------------------------------------------------------- sign in
  function showSignIn(message) {
    $('nav').hidden = true;
    const { main } = begin('signin', 'Sign in');
    const input = el('textarea', { id: 'token-input', rows: '4', autocomplete: 'off', spellcheck: 'false', required: true,
      'aria-describedby': 'token-help' });
    const form = el('form', { id: 'signin-form' },
      el('label', { for: 'token-input' }, 'Bearer token (JWT)'),
      el('p', { id: 'token-help', class: 'help' }, 'It is kept in this browser tab only (sessionStorage) and sent only to this ledger.'),
      input, el('button', { type: 'submit', id: 'signin-submit' }, 'Sign in'));
    main.append(el('section', { id: 'signin', 'aria-labelledby': 'view-title' }, heading('Sign in'), form));
    if (message) report(new Error(message));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const token = input.value.trim().replace(/^Bearer\s+/i, '');
      if (!token) return;
      clearMessages();
      say('Checking the token…');
      try {
        await api('/v1/accounts/me/collaborations', { token });   // the token is kept only if the API accepts it
      } catch (e) {
        say('');
        if (e instanceof ApiError && e.status === 401) report(new Error(`The ledger refused this token: ${e.message} (${e.code}, HTTP 401)`));
        else report(e);
        return;
      }
      setToken(token);
      say('Signed in.');
      if (!location.hash.startsWith('#/')) location.hash = '#/collaborations'; else route();
    });
    input.focus();
  }

  // ---------------------------------------------------------------- collaborations list
  function showCollaborations() {
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
      columns: ['Local identifier', 'Title', 'Owner', 'Started', 'Invited', 'Granted', 'Removed', 'Collaboration ID'],
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
          el('td', { class: 'num' }, optional(counts.removed)), el('td', {}, code(c.collaborationId)));
      },
    });
    form.addEventListener('submit', (ev) => { ev.preventDefault(); q = search.value.trim(); table.reload(); });
    table.reload();
    focusHeading();
  }

  // ---------------------------------------------------------------- one collaboration
  function showCollaboration(id) {
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
        ['Members', `${counts.invited} invited, ${counts.granted} granted, ${counts.removed} removed`, 'collab-counts'],
        ['Universal link', code(c.universalLink), 'collab-link'],
        ['Log position', optional(c.position), 'collab-position'],
      ]));
      document.title = `${c.title === null ? '(erased)' : c.title} · Participant Ledger console`;
      setState(overview, 'ready');
    }, (e) => { if (live()) { setState(overview, 'error'); report(e, overview); } });

    // (b) members now, or as of a moment: {asOf} typed, or {atPosition, time} picked on the timeline
    let moment = null, knownPosition = null;
    const asOf = el('input', { id: 'asof-input', type: 'text', inputmode: 'text', autocomplete: 'off', spellcheck: 'false',
      placeholder: '2026-11-25T03:43:43.332100Z', 'aria-describedby': 'asof-help' });
    const momentForm = el('form', { id: 'asof-form', class: 'inline-form' },
      el('label', { for: 'asof-input' }, 'Moment (RFC 3339 time)'), asOf,
      el('button', { type: 'submit', id: 'asof-apply' }, 'Show members at this moment'),
      el('button', { type: 'button', id: 'asof-now' }, 'Now'),
      el('p', { id: 'asof-help', class: 'help' }, 'For example 2026-11-25T03:43:43Z. Leave empty (or press Now) for the members now.'));
    members.append(momentForm);
    members.dataset.moment = 'now';
    const memberTable = pagedTable(members, {
      name: 'members', label: 'Members now', live, empty: 'No members.',
      columns: ['Account', 'State', 'Invited at', 'Granted at', 'Identity root hash'],
      load: async (cursor) => {
        const m = moment, params = { limit: 200, cursor, minPosition: cursor ? null : knownPosition };
        if (m && m.atPosition) params.atPosition = m.atPosition;
        else if (m) params.asOf = m.asOf;
        const when = !m ? 'now' : m.atPosition ? `at ${m.time} (${m.type}, position ${m.atPosition})` : `as of ${m.asOf}`;
        const r = await api(url(base + '/members', params));
        return { items: r.members, nextCursor: r.nextCursor, caption: `Members ${when} (log position ${r.position})`,
          attrs: { moment: m ? (m.asOf || m.time) : 'now' }, announce: `Members ${when}.` };
      },
      row: (m) => el('tr', { class: 'member-row', 'data-account': m.accountId || '', 'data-state': m.state },
        el('td', { class: 'member-account' }, m.accountId === undefined ? optional(null) : personal(m.accountId)),
        el('td', { class: 'member-state state-' + cssName(m.state) }, m.state),
        el('td', {}, time(m.invitedAt)), el('td', {}, time(m.grantedAt)), el('td', {}, code(m.rootHash))),
    });
    function pick(next) {
      moment = next;
      asOf.value = next ? (next.asOf || next.time) : '';
      for (const m of timelineBox.querySelectorAll('.mark')) {
        const on = !!(next && next.atPosition && m.dataset.position === String(next.atPosition));
        m.classList.toggle('selected', on);
        m.setAttribute('aria-pressed', on ? 'true' : 'false');
      }
      memberTable.reload();
    }
    momentForm.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const v = asOf.value.trim();
      pick(v ? { asOf: v } : null);
    });
    $('asof-now').addEventListener('click', () => pick(null));

    // (c) history, paged
    pagedTable(hist, {
      name: 'history', label: 'History (log order)', live, empty: 'No events.',
      columns: ['Position', 'Version', 'Time', 'Type', 'Actor', 'Details'],
      load: async (cursor) => {
        const r = await api(url(base + '/history', { limit: PAGE, cursor }));
        return { items: r.events, nextCursor: r.nextCursor };
      },
      row: (e) => el('tr', { class: 'history-row', 'data-type': e.type },
        el('td', { class: 'num' }, String(e.position)), el('td', { class: 'num' }, String(e.version)),
        el('td', {}, time(e.time)), el('td', { class: 'event-type type-' + cssName(e.type) }, e.type),
        el('td', {}, optional(e.actor)), el('td', { class: 'event-data' }, eventData(e.data))),
    }).reload();

    // The timeline: every history page; the members then read at least up to its last event.
    setState(timeline, 'loading');
    setState(members, 'loading');
    allHistory(base).then(({ events, truncated }) => {
      if (!live()) return;
      knownPosition = events.length ? Math.max(...events.map((e) => e.position)) : null;
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
    }).finally(() => { if (live()) memberTable.reload(); });
    focusHeading();
  }

  async function allHistory(base) {
    const events = [];
    let cursor = null;
    for (let i = 0; i < TIMELINE_MAX_PAGES; i++) {
      const r = await api(url(base + '/history', { limit: TIMELINE_PAGE, cursor }));
      events.push(...r.events);
      if (!r.nextCursor) return { events, truncated: false };
      cursor = r.nextCursor;
    }
    return { events, truncated: true };
  }

  // An event's data as nested "key: value" lists; null (an erased personal value) shows as (erased).
  function eventData(v) {
    if (v === null) return personal(null);
    if (typeof v !== 'object') return document.createTextNode(String(v));
    const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v);
    return el('ul', { class: 'kv' }, entries.map(([k, x]) => el('li', {}, k + ': ', eventData(x))));
  }

  // ---------------------------------------------------------------- the timeline (inline SVG)
  // One lane per event type, x by time. Shapes differ by kind (not colour alone): circles for
  // additions and grants, squares for removals and revocations, diamonds for notices, triangles
  // for the rest. Marks are appended in log order, so Tab walks them chronologically.
  function drawTimeline(events, onPick) {
    if (!events.length) return el('p', { class: 'help' }, 'No events.');
    const types = [...KNOWN_TYPES.filter((t) => events.some((e) => e.type === t)),
      ...new Set(events.map((e) => e.type).filter((t) => !KNOWN_TYPES.includes(t)))];
    const W = 1000, left = 170, right = 24, top = 16, lane = 30, H = top + types.length * lane + 34;
    const times = events.map((e) => Date.parse(e.time));
    const known = times.filter(Number.isFinite);
    const t0 = known.length ? Math.min(...known) : NaN, t1 = known.length ? Math.max(...known) : NaN;
    const x = (t) => (!(t1 > t0) || Number.isNaN(t)) ? (left + W - right) / 2 : left + (t - t0) / (t1 - t0) * (W - left - right);
    const y = (type) => top + types.indexOf(type) * lane + lane / 2;
    const first = known.length ? events[times.indexOf(t0)].time : '', last = known.length ? events[times.indexOf(t1)].time : '';
    const root = svg('svg', { id: 'timeline-svg', viewBox: `0 0 ${W} ${H}`, role: 'group', class: 'timeline',
      'aria-label': `Timeline of ${events.length} events from ${first} to ${last}`, 'aria-describedby': 'timeline-help' });
    for (const t of types) {
      root.append(svg('line', { class: 'lane', x1: left, x2: W - right, y1: y(t), y2: y(t) }),
        svg('text', { class: 'lane-label', x: left - 10, y: y(t) + 4, 'text-anchor': 'end' }, t));
    }
    root.append(svg('text', { class: 'axis-label', x: left, y: H - 10 }, first),
      svg('text', { class: 'axis-label', x: W - right, y: H - 10, 'text-anchor': 'end' }, last));
    events.forEach((e, i) => {
      const cx = x(times[i]), cy = y(e.type), r = 8;
      const label = `${e.type} at ${e.time}, log position ${e.position}`;
      let mark;
      if (/Removed|Revoked/.test(e.type)) mark = svg('rect', { x: cx - r, y: cy - r, width: 2 * r, height: 2 * r });
      else if (e.type === 'HighlightPosted') mark = svg('polygon', { points: `${cx},${cy - r - 2} ${cx + r + 2},${cy} ${cx},${cy + r + 2} ${cx - r - 2},${cy}` });
      else if (/Added|Granted/.test(e.type)) mark = svg('circle', { cx, cy, r });
      else mark = svg('polygon', { points: `${cx},${cy - r - 1} ${cx + r + 1},${cy + r} ${cx - r - 1},${cy + r}` });
      build(mark, { class: `mark mark-${cssName(e.type)}`, tabindex: '0', role: 'button', 'aria-pressed': 'false',
        'aria-label': label, 'data-position': e.position, 'data-time': e.time }, [svg('title', {}, label)]);
      mark.addEventListener('click', () => onPick(e));
      mark.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); onPick(e); }
      });
      root.append(mark);
    });
    const legend = el('ul', { class: 'legend', 'aria-label': 'Kinds of event' }, types.map((t) =>
      el('li', {}, svg('svg', { class: 'swatch', viewBox: '0 0 12 12', 'aria-hidden': 'true' },
        svg('rect', { x: 1, y: 1, width: 10, height: 10, class: 'swatch-' + cssName(t) })), ' ', t)));
    return el('div', {}, el('div', { class: 'timeline-scroll' }, root), legend);
  }

  // ---------------------------------------------------------------- access audit
  function showAudit() {
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
      row: (a) => el('tr', { class: 'audit-row', 'data-account': a.accountId, 'data-change': a.change },
        el('td', { class: 'num' }, String(a.position)), el('td', {}, time(a.time)),
        el('td', {}, collabLink(a.collaborationId)), el('td', { class: 'audit-account' }, personal(a.accountId)),
        el('td', { class: 'change-' + cssName(a.change) }, a.change), el('td', {}, optional(a.reason)),
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

  // ---------------------------------------------------------------- log health
  // The signed note: origin, size, root hash, (extension lines), blank line, "— name sig" lines.
  function parseCheckpoint(note) {
    const [body, sigs = ''] = note.split('\n\n');
    const lines = body.split('\n');
    if (lines.length < 3 || !/^\d+$/.test(lines[1])) throw new Error('the checkpoint is not a signed note');
    const signers = sigs.split('\n').filter((l) => l.startsWith('\u2014 ')).map((l) => l.slice(2).split(' ')[0]);
    return { origin: lines[0], size: Number(lines[1]), rootHash: lines[2], signers };
  }

  function showHealth() {
    const { main, live } = begin('health', 'Log health');
    const refresh = el('button', { type: 'button', id: 'health-refresh' }, 'Refresh');
    const cp = section('checkpoint', 'Latest published checkpoint');
    const lag = section('lag', 'Checkpoint lag');
    const proj = section('projections', 'Projections');
    main.append(heading('Log health'), refresh, cp, lag, proj);
    refresh.addEventListener('click', () => route());
    for (const s of [cp, lag, proj]) { s.append(el('p', { class: 'section-error' })); setState(s, 'loading'); }

    const status = api('/v1/log/status');
    const note = api('/v1/log/checkpoint', { raw: true, accept: 'text/plain' }).then((r) => r.text());

    Promise.allSettled([status, note]).then(([s, n]) => {
      if (!live()) return;
      const st = s.status === 'fulfilled' ? s.value : null;
      // Checkpoint: the signed note's own figures; when and by whom from /v1/log/status.
      let parsed = null;
      try { if (n.status === 'fulfilled') parsed = parseCheckpoint(n.value); } catch (e) { report(e, cp); }
      const c = st && st.checkpoint;
      if (parsed || c) {
        const cosigners = c && Array.isArray(c.cosigners) ? c.cosigners : null;
        cp.append(details([
          ['Origin', optional(parsed && parsed.origin), 'health-origin'],
          ['Tree size', String(parsed ? parsed.size : c.size), 'health-size'],
          ['Root hash', code(parsed ? parsed.rootHash : c.rootHash), 'health-root'],
          ['Signed at', time(c && c.signedAt), 'health-signed'],
          ['Cosigners', cosigners ? (cosigners.length ? cosigners.join(', ') : 'none') : optional(null), 'health-cosigners'],
          ['Signatures on the note', optional(parsed && parsed.signers.join(', ')), 'health-signers'],
        ]));
        if (n.status === 'fulfilled') cp.append(el('details', {}, el('summary', {}, 'Signed note'), el('pre', { id: 'health-note' }, n.value)));
        setState(cp, 'ready');
      } else {
        setState(cp, 'error');
        report(n.status === 'rejected' ? n.reason : new Error('no checkpoint'), cp);
      }
      if (s.status === 'rejected') {
        for (const sec of [lag, proj]) { setState(sec, 'error'); report(s.reason, sec); }
        return;
      }
      lag.append(details([
        ['Log head (position)', String(st.head), 'health-head'],
        ['Events not yet in a checkpoint', optional(st.checkpointLagEvents), 'health-lag-events'],
        ['Seconds behind', optional(st.checkpointLagSeconds), 'health-lag-seconds'],
      ]));
      setState(lag, 'ready');
      const rows = (st.projections || []).map((p) => el('tr', { class: 'projection-row', 'data-name': p.name },
        el('td', {}, p.name), el('td', { class: 'num' }, optional(p.position)), el('td', { class: 'num' }, optional(p.lagEvents)),
        el('td', { class: 'num' }, optional(p.lagSeconds)), el('td', { class: 'status-' + cssName(p.status) }, optional(p.status))));
      proj.append(el('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-labelledby': 'projections-h' },
        el('table', { id: 'projections-table' }, el('thead', {}, el('tr', {},
          ['Projection', 'Position', 'Lag (events)', 'Lag (seconds)', 'Status'].map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', {}, rows.length ? rows : el('tr', {}, el('td', { colspan: 5 }, 'No projections reported.'))))));
      setState(proj, 'ready');
    });
    focusHeading();
  }

  // ---------------------------------------------------------------- start
  $('signout').addEventListener('click', () => {
    dropToken();
    history.replaceState(null, '', '#/collaborations');   // the next sign-in starts at the list
    route();
    say('Signed out.');
  });
  // The skip link focuses <main> without touching the hash (the hash is the route).
  document.querySelector('.skip-link').addEventListener('click', (ev) => { ev.preventDefault(); $('main').focus(); });
  window.addEventListener('hashchange', route);
  route();
})();
