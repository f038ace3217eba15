// A collaboration's timeline: every history page read, drawn as an inline SVG with one lane per
// event type. Each mark is a button (tabindex 0, role button, aria-label "<type> at <time>, log
// position <n>", data-position, data-time: the browser test's contract) that picks its moment.
// Below the lanes, each identity's access window as a bar, its expiries marked (windows.js).
import { el, svg, build, cssName } from './dom.js';
import { api, url } from './api.js';
import { sentenceText, EVENT_TYPES } from './history.js';
import { accessWindows, windowTimes, drawWindows } from './windows.js';

const TIMELINE_PAGE = 1000;         // history events per request when drawing the timeline
const TIMELINE_MAX_PAGES = 20;      // at most 20,000 events are drawn
const MAX_WINDOW_ROWS = 100;        // identities whose access windows are drawn, at most

// Every event of the collaboration at base (/v1/collaborations/<id>), in log order, up to
// TIMELINE_MAX_PAGES pages: {events, truncated}.
export async function allHistory(base) {
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

// One lane per event type, x by time. Shapes differ by kind (not colour alone): circles for
// additions and grants, squares for removals, revocations and expiries, diamonds for notices,
// triangles for the rest (window changes, rejections, unknown types). Marks are appended in log
// order, so Tab walks them chronologically. onPick(event) on click, Enter or Space.
export function drawTimeline(events, onPick) {
  if (!events.length) return el('p', { class: 'help' }, 'No events.');
  // Lanes in EVENT_TYPES's order first; types not listed (newer than this console) follow as they come.
  const types = [...EVENT_TYPES.filter((t) => events.some((e) => e.type === t)),
    ...new Set(events.map((e) => e.type).filter((t) => !EVENT_TYPES.includes(t)))];
  const allWindows = accessWindows(events), windows = allWindows.slice(0, MAX_WINDOW_ROWS);
  const W = 1000, left = 170, right = 24, top = 16, lane = 30, rowH = 26;
  const lanesEnd = top + types.length * lane, H = lanesEnd + (windows.length ? 24 + windows.length * rowH : 0) + 34;
  const times = events.map((e) => Date.parse(e.time));
  const known = times.filter(Number.isFinite);
  // The scale covers the events and the windows' bounds already past (windows.js: windowTimes).
  const span = known.concat(windowTimes(windows, Date.now()));
  const t0 = span.length ? Math.min(...span) : NaN, t1 = span.length ? Math.max(...span) : NaN;
  const x = (t) => (!(t1 > t0) || Number.isNaN(t)) ? (left + W - right) / 2 : left + (t - t0) / (t1 - t0) * (W - left - right);
  const y = (type) => top + types.indexOf(type) * lane + lane / 2;
  const first = known.length ? events[times.indexOf(Math.min(...known))].time : '';
  const last = known.length ? events[times.indexOf(Math.max(...known))].time : '';
  // An axis end is the event's own time text, or the window bound's when one lies beyond the events.
  const axis = (t, text) => !Number.isFinite(t) ? '' : known.includes(t) ? text : new Date(t).toISOString();
  const root = svg('svg', { id: 'timeline-svg', viewBox: `0 0 ${W} ${H}`, role: 'group', class: 'timeline',
    'aria-label': `Timeline of ${events.length} events from ${first} to ${last}` +
      (windows.length ? `, with the access windows of ${windows.length} identities` : ''), 'aria-describedby': 'timeline-help' });
  for (const t of types) {
    root.append(svg('line', { class: 'lane', x1: left, x2: W - right, y1: y(t), y2: y(t) }),
      svg('text', { class: 'lane-label', x: left - 10, y: y(t) + 4, 'text-anchor': 'end' }, t));
  }
  root.append(svg('text', { class: 'axis-label', x: left, y: H - 10 }, axis(t0, first)),
    svg('text', { class: 'axis-label', x: W - right, y: H - 10, 'text-anchor': 'end' }, axis(t1, last)));
  if (windows.length) root.append(...drawWindows(windows, { x, top: lanesEnd + 6, rowH, left, edge: W - right }));
  events.forEach((e, i) => {
    const cx = x(times[i]), cy = y(e.type), r = 8;
    const label = `${e.type} at ${e.time}, log position ${e.position}`;
    let mark;
    if (/Removed|Revoked|Expired/.test(e.type)) mark = svg('rect', { x: cx - r, y: cy - r, width: 2 * r, height: 2 * r });
    else if (e.type === 'HighlightPosted') mark = svg('polygon', { points: `${cx},${cy - r - 2} ${cx + r + 2},${cy} ${cx},${cy + r + 2} ${cx - r - 2},${cy}` });
    else if (/Added|Granted/.test(e.type)) mark = svg('circle', { cx, cy, r });
    else mark = svg('polygon', { points: `${cx},${cy - r - 1} ${cx + r + 1},${cy + r} ${cx - r - 1},${cy + r}` });
    build(mark, { class: `mark mark-${cssName(e.type)}`, tabindex: '0', role: 'button', 'aria-pressed': 'false',
      'aria-label': label, 'data-position': e.position, 'data-time': e.time }, [svg('title', {}, `${label}: ${sentenceText(e)}`)]);
    mark.addEventListener('click', () => onPick(e));
    mark.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); onPick(e); }
    });
    root.append(mark);
  });
  const swatch = (cls, attrs) => svg('svg', { class: 'swatch', viewBox: '0 0 12 12', 'aria-hidden': 'true' },
    svg('rect', { x: 1, y: 1, width: 10, height: 10, class: cls, ...attrs }));
  const legend = el('ul', { class: 'legend', 'aria-label': 'Kinds of event' }, types.map((t) =>
    el('li', {}, swatch('swatch-' + cssName(t)), ' ', t)),
  windows.length ? [el('li', {}, swatch('swatch-window-granted', { y: 3, height: 6 }), ' access window (granted)'),
    el('li', {}, swatch('swatch-window-invited', { y: 3, height: 6 }), ' access window (not yet granted)'),
    el('li', {}, swatch('swatch-expiry', { x: 4, width: 4 }), ' expiry (at its due time)')] : []);
  const more = allWindows.length > windows.length
    ? el('p', { class: 'help' }, `The access windows of the first ${windows.length} of ${allWindows.length} identities are drawn.`) : null;
  return el('div', {}, el('div', { class: 'timeline-scroll' }, root), legend, more);
}
