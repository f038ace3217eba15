// Access windows on the timeline (SPEC "Time-bound access"): one row per identity that ever had a
// window, each window a bar from its grant (or, not yet granted, its notBefore or invitation) to
// its end: the AccessExpired's dueAt, the removal, or notAfter still ahead. An AccessWindowChanged
// moves the bar's end; each AccessExpired puts a mark at its dueAt. The browser test's contract:
//   rect.window-bar[data-root-hash][data-start][data-end][data-end-reason=expired|removed|due|open]
//     [data-not-before][data-not-after][data-account][data-granted=true|false][data-changes]
//   rect.expiry-mark[data-root-hash][data-due-at][data-position][data-time][data-account]
// accessWindows(events) is pure (no DOM; node can test it) and reads every field defensively.
import { svg } from './dom.js';
import { shortHash, moment } from './history.js';

const isText = (v) => typeof v === 'string' && v !== '';
const text = (v) => isText(v) ? v : null;
const ms = (iso) => isText(iso) ? Date.parse(iso) : NaN;

// The identities' windows, from the history in log order: [{rootHash, segments}] in order of first
// appearance, only those with a window. A segment is one stay of the identity: {invitedAt,
// grantedAt, account, notBefore, notAfter, changes: [{time, position, notBefore, notAfter,
// previousNotAfter}], expiry: {time, position, dueAt, account} | null, removedAt}; an identity added
// again after its window ended (or it was removed) starts a new segment in the same row.
export function accessWindows(events) {
  const rows = new Map();
  const current = (h) => {
    const r = rows.get(h);
    const s = r && r.segments[r.segments.length - 1];
    return s && !s.ended ? s : null;
  };
  const begin = (h, invitedAt, notBefore, notAfter) => {
    if (!rows.has(h)) rows.set(h, { rootHash: h, segments: [] });
    const s = { invitedAt, grantedAt: null, account: null, notBefore, notAfter, changes: [], expiry: null, removedAt: null, ended: false };
    rows.get(h).segments.push(s);
    return s;
  };
  const of = (h) => current(h) || begin(h, null, null, null);   // history drawn from its middle
  for (const e of events || []) {
    const d = e && e.data && typeof e.data === 'object' && !Array.isArray(e.data) ? e.data : {};
    if (e.type === 'IdentityAdded') {
      const list = Array.isArray(d.rootHashes) ? d.rootHashes : [d.rootHash];
      for (const h of list.filter(isText)) if (!current(h)) begin(h, e.time, text(d.notBefore), text(d.notAfter));
      continue;
    }
    if (!isText(d.rootHash)) continue;
    if (e.type === 'AccessGranted') {
      const s = of(d.rootHash);
      s.grantedAt = e.time;
      if (isText(d.account)) s.account = d.account;
      if ('notBefore' in d || 'notAfter' in d) { s.notBefore = text(d.notBefore); s.notAfter = text(d.notAfter); }
    } else if (e.type === 'AccessWindowChanged') {
      const s = of(d.rootHash);
      s.changes.push({ time: e.time, position: e.position, notBefore: text(d.notBefore), notAfter: text(d.notAfter),
        previousNotAfter: s.notAfter });
      s.notBefore = text(d.notBefore);
      s.notAfter = text(d.notAfter);
    } else if (e.type === 'AccessExpired') {
      const s = of(d.rootHash);
      const account = isText(d.account) ? d.account : s.account;
      s.expiry = { time: e.time, position: e.position, dueAt: text(d.dueAt) || s.notAfter || e.time, account };
      if (account) s.account = account;
      s.ended = true;
    } else if (e.type === 'IdentityRemoved') {
      const s = current(d.rootHash);
      if (s) { s.removedAt = e.time; s.ended = true; }
    }
  }
  const windowed = (s) => s.notBefore || s.notAfter || s.changes.length || s.expiry;
  return [...rows.values()].map((r) => ({ rootHash: r.rootHash, segments: r.segments.filter(windowed) }))
    .filter((r) => r.segments.length);
}

// Where a segment's bar starts and ends, and why it ends there. A grant whose window starts
// later (scheduled) draws from the window's start: it gives nothing before it.
export function extent(s) {
  const later = (a, b) => (b && Date.parse(b) > Date.parse(a) ? b : a);
  const start = s.grantedAt ? later(s.grantedAt, s.notBefore) : s.notBefore || s.invitedAt;
  if (s.expiry) return { start, end: s.expiry.dueAt, reason: 'expired' };
  if (s.removedAt) return { start, end: s.removedAt, reason: 'removed' };
  return s.notAfter ? { start, end: s.notAfter, reason: 'due' } : { start, end: null, reason: 'open' };
}

// The moments the timeline's scale should include: every bound already past at `now` (bounds
// still ahead would crush the events to the left; their bars run to the edge instead).
export function windowTimes(rows, now) {
  const times = [];
  for (const r of rows) {
    for (const s of r.segments) {
      const { start, end } = extent(s);
      for (const t of [ms(start), ms(end)]) if (Number.isFinite(t) && t <= now) times.push(t);
    }
  }
  return times;
}

const describe = (r, s, { start, end, reason }) => {
  const who = s.account ? ` (${s.account})` : '';
  const from = start ? `from ${moment(start)}` : 'from an unknown time';
  const to = { expired: `expired, due ${moment(end)}`, removed: `until its removal at ${moment(end)}`,
    due: `until ${moment(end)}`, open: 'with no end' }[reason];
  const moved = s.changes.length ? `; window changed ${s.changes.length} time${s.changes.length > 1 ? 's' : ''}` : '';
  return `Access window of identity ${shortHash(r.rootHash)}${who}: ${from}, ${to}${moved}`;
};

// The rows drawn into the timeline's SVG from y = top, one `rowH` high each, x(t) the timeline's
// scale (t in ms) and [left, edge] its drawing area. Answers the SVG elements.
export function drawWindows(rows, { x, top, rowH, left, edge }) {
  const nodes = [svg('text', { class: 'lane-label window-heading', x: left - 10, y: top + 12, 'text-anchor': 'end' }, 'Access windows')];
  rows.forEach((r, i) => {
    const y = top + 18 + i * rowH + rowH / 2;
    const account = r.segments.map((s) => s.account).filter(Boolean).pop();
    nodes.push(svg('line', { class: 'lane window-lane', x1: left, x2: edge, y1: y, y2: y }),
      svg('text', { class: 'lane-label', x: left - 10, y: y + 4, 'text-anchor': 'end' },
        shortHash(r.rootHash) + (account ? ' ' + account : '')));
    for (const s of r.segments) {
      const ext = extent(s);
      const startMs = ms(ext.start);
      const x1 = Number.isFinite(startMs) ? Math.max(left, Math.min(edge - 3, x(startMs))) : left;
      const endMs = ms(ext.end);
      const clipped = !Number.isFinite(endMs) || x(endMs) > edge;
      const x2 = clipped ? edge : Math.max(x1 + 3, x(endMs));
      const label = describe(r, s, ext);
      nodes.push(svg('rect', {
        class: `window-bar window-${ext.reason}${s.grantedAt ? ' window-granted' : ' window-invited'}`,
        x: x1, y: y - 6, width: Math.max(3, x2 - x1), height: 12, rx: 3, role: 'img', 'aria-label': label,
        'data-root-hash': r.rootHash, 'data-start': ext.start || '', 'data-end': ext.end || '', 'data-end-reason': ext.reason,
        'data-not-before': s.notBefore || '', 'data-not-after': s.notAfter || '', 'data-account': s.account || '',
        'data-granted': s.grantedAt ? 'true' : 'false', 'data-changes': s.changes.length,
        'data-moved-from': s.changes.map((c) => c.previousNotAfter || '').join(' ').trim(),
      }, svg('title', {}, label)));
      // A window still running past the drawn range: an arrow at the edge says it goes on.
      if (clipped) nodes.push(svg('polygon', { class: 'window-continues', 'aria-hidden': 'true',
        points: `${edge - 1},${y - 7} ${edge + 8},${y} ${edge - 1},${y + 7}` }));
      if (s.expiry) {
        const ex = Math.max(left, Math.min(edge, x(ms(s.expiry.dueAt)))), mark = `Access of ${s.expiry.account || 'no account'} through identity ` +
          `${shortHash(r.rootHash)} expired: due ${moment(s.expiry.dueAt)}, recorded ${moment(s.expiry.time)} (log position ${s.expiry.position})`;
        nodes.push(svg('rect', { class: 'expiry-mark', x: ex - 2.5, y: y - 11, width: 5, height: 22, role: 'img',
          'aria-label': mark, 'data-root-hash': r.rootHash, 'data-due-at': s.expiry.dueAt, 'data-position': s.expiry.position,
          'data-time': s.expiry.time, 'data-account': s.expiry.account || '' }, svg('title', {}, mark)));
      }
    }
  });
  return nodes;
}
