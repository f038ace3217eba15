// Participant Ledger: the auditor's read-only console (issue 31), entry module (issue 41).
// Native ES modules, no framework, no build step: console.html loads this file with
// <script type="module">, and it imports one module per view from the same folder (the ledger
// serves every file of Sources/LedgerConsole/Console as /console/<name>, scripts as text/javascript).
//   dom.js     DOM helpers: values written as text, never as markup
//   api.js     the bearer token (sessionStorage) and GETs of the API
//   ui.js      the status and error regions, starting a view, sections, paged tables
//   signin.js, collaborations.js, collaboration.js (+ timeline.js, members.js, history.js),
//   audit.js, health.js: the views
// Modules run once, deferred, in strict mode: this file routes by the address's hash.
import { $ } from './dom.js';
import { getToken, dropToken } from './api.js';
import { whenSignedOut, say } from './ui.js';
import { showSignIn } from './signin.js';
import { showCollaborations } from './collaborations.js';
import { showCollaboration } from './collaboration.js';
import { showAudit } from './audit.js';
import { showHealth } from './health.js';

// #/collaborations, #/collaborations/<id>, #/audit, #/health; anything else goes to the list.
// Without a token: the sign-in view, whatever the hash (it is kept for after signing in).
function route() {
  const signedIn = !!getToken();
  $('nav').hidden = !signedIn;
  if (!signedIn) return showSignIn(null, route);
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

// A 401 from any read: the token is gone (ui.js dropped it); sign in again, then back here.
whenSignedOut((message) => showSignIn(message, route));
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
