// Log health (#/health): the latest published checkpoint (the signed note's own figures, and
// when and by whom from /v1/log/status), the checkpoint lag, the expiry service and the
// projections' lag.
import { el, setState, optional, time, code, cssName, details } from './dom.js';
import { api } from './api.js';
import { begin, heading, section, focusHeading, report } from './ui.js';

// The signed note: origin, size, root hash, (extension lines), blank line, "— name sig" lines.
export function parseCheckpoint(note) {
  const [body, sigs = ''] = note.split('\n\n');
  const lines = body.split('\n');
  if (lines.length < 3 || !/^\d+$/.test(lines[1])) throw new Error('the checkpoint is not a signed note');
  const signers = sigs.split('\n').filter((l) => l.startsWith('\u2014 ')).map((l) => l.slice(2).split(' ')[0]);
  return { origin: lines[0], size: Number(lines[1]), rootHash: lines[2], signers };
}

export function showHealth() {
  const { main, live } = begin('health', 'Log health');
  const refresh = el('button', { type: 'button', id: 'health-refresh' }, 'Refresh');
  const cp = section('checkpoint', 'Latest published checkpoint');
  const lag = section('lag', 'Checkpoint lag');
  const expiry = section('expiry', 'Access expiry');
  const proj = section('projections', 'Projections');
  main.append(heading('Log health'), refresh, cp, lag, expiry, proj);
  refresh.addEventListener('click', () => showHealth());   // the view drawn anew
  for (const s of [cp, lag, expiry, proj]) { s.append(el('p', { class: 'section-error' })); setState(s, 'loading'); }

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
      for (const sec of [lag, expiry, proj]) { setState(sec, 'error'); report(s.reason, sec); }
      return;
    }
    // A cut or rewritten log (the stored tree no longer matches it): the checkpointer refuses to
    // sign until an operator acts. #health-tree[data-state=intact|cut|rewritten].
    const tree = st.tree && typeof st.tree === 'object' ? st.tree : null;
    const broken = tree && tree.state !== 'intact';
    lag.append(details([
      ['Log head (position)', String(st.head), 'health-head'],
      ['Events not yet in a checkpoint', optional(st.checkpointLagEvents), 'health-lag-events'],
      ['Seconds behind', optional(st.checkpointLagSeconds), 'health-lag-seconds'],
      ['The log against its tree', tree ? el('span', { id: 'health-tree', 'data-state': tree.state, class: broken ? 'status-failed' : 'status-running' },
        broken ? `${tree.state}: the log no longer holds the ${tree.size} events its tree was built over; no checkpoint is signed until an operator acts`
          : `intact (${tree.size} events in the tree)`) : optional(null), 'health-tree-state'],
    ]));
    setState(lag, 'ready');
    showExpiry(expiry, st.expiry);
    // On shards each projection runs on one shard, named beside it (data-shard).
    const rows = (st.projections || []).map((p) => el('tr', { class: 'projection-row', 'data-name': p.name,
      ...(Number.isInteger(p.shard) ? { 'data-shard': String(p.shard) } : {}) },
      el('td', {}, Number.isInteger(p.shard) ? `${p.name} (shard ${p.shard})` : p.name), el('td', { class: 'num' }, optional(p.position)), el('td', { class: 'num' }, optional(p.lagEvents)),
      el('td', { class: 'num' }, optional(p.lagSeconds)), el('td', { class: 'status-' + cssName(p.status) }, optional(p.status))));
    proj.append(el('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-labelledby': 'projections-h' },
      el('table', { id: 'projections-table' }, el('thead', {}, el('tr', {},
        ['Projection', 'Position', 'Lag (events)', 'Lag (seconds)', 'Status'].map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, rows.length ? rows : el('tr', {}, el('td', { colspan: 5 }, 'No projections reported.'))))));
    setState(proj, 'ready');
  });
  focusHeading();
}

// Who holds the expiry lease: the service (its process, since when, its last round), or a session
// that is not one, sitting on the lock (#health-expiry-holder > span[data-recognised]).
function leaseHolder(h) {
  if (!h || typeof h !== 'object') return el('span', { class: 'none' }, 'no one');
  if (h.recognised !== true) {
    return el('span', { class: 'status-failed', 'data-recognised': 'false' },
      `${h.applicationName || 'a session'} (pid ${h.pid}), not an expiry service: nothing expires while it holds the lease`);
  }
  return el('span', { 'data-recognised': 'true' }, `${h.applicationName} (pid ${h.pid}) since `, time(h.since), ', last round ', time(h.progressAt));
}

// The expiry service (SPEC "Time-bound access"): whether an instance holds its lease, the next
// window due and how many are overdue (due more than a second ago without their AccessExpired).
// #expiry[data-running][data-overdue] > #health-expiry-running, #health-expiry-next, #health-expiry-overdue.
function showExpiry(section, x) {
  if (!x || typeof x !== 'object') {
    section.append(el('p', { id: 'health-expiry-running', class: 'help' }, 'This ledger does not report an expiry service.'));
    setState(section, 'ready');
    return;
  }
  const running = x.running === true, overdue = Number.isInteger(x.overdue) ? x.overdue : null;
  section.dataset.running = String(running);
  section.dataset.overdue = overdue === null ? '' : String(overdue);
  section.append(details([
    ['Service', el('span', { class: running ? 'status-running' : 'status-stopped' }, running ? 'running' : 'not running'),
      'health-expiry-running'],
    ['Next window due', x.nextDueAt ? time(x.nextDueAt) : el('span', { class: 'none' }, 'none'), 'health-expiry-next'],
    ['Overdue windows', el('span', { class: overdue ? 'status-overdue' : null }, optional(overdue)), 'health-expiry-overdue'],
    ['Lease held by', leaseHolder(x.holder), 'health-expiry-holder'],
  ]), el('p', { class: 'help' }, x.holder && x.holder.recognised !== true
    ? 'A session that is not an expiry service holds the lease: nothing expires until it lets go (end it, or see docs/OPERATIONS.md).'
    : running
    ? 'One instance holds the expiry lease and appends AccessExpired when a window ends; overdue ones are appended at once with their true due time.'
    : 'No instance holds the expiry lease: windows that end are not recorded until one runs (ledger serve or ledger project).'));
  setState(section, 'ready');
}
