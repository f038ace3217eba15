// Participant Ledger: the auditor's read-only console (issue 31), entry module (issue 41).
// Native ES modules, no framework, no build step: console.html loads this file with
// <script type="module">, and it imports one module per view from the same folder (the ledger
// serves every file of Sources/LedgerConsole/Console as /console/<name>, scripts as text/javascript).
//   dom.js     DOM helpers: values written as text, never as markup
//   api.js     the bearer token (sessionStorage) and GETs of the API
//   ui.js      the status and error regions, starting a view, sections, paged tables
//   oidc.js    signing in through the identity provider, where the ledger names one (issue 69)
//   signin.js, collaborations.js, collaboration.js (+ timeline.js, members.js, history.js),
//   audit.js, health.js: the views
// Modules run once, deferred, in strict mode: this file routes by the address's hash.
import { $ } from './dom.js';
import { getToken, whenExpired } from './api.js';
import { whenSignedOut, say, report } from './ui.js';
import { showSignIn } from './signin.js';
import { loadProvider, isReturn, isSignOutReturn, finishSignIn, renew, signOut, issuerHost } from './oidc.js';
import { showCollaborations } from './collaborations.js';
import { showCollaboration } from './collaboration.js';
import { showAudit } from './audit.js';
import { showHealth } from './health.js';

// The identity provider the ledger names (oidc.js), read once below; null: a pasted token.
let provider = null;

// #/collaborations, #/collaborations/<id>, #/audit, #/health; anything else goes to the list.
// Without a token: the sign-in view, whatever the hash (it is kept for after signing in).
function route() {
  const signedIn = !!getToken();
  $('nav').hidden = !signedIn;
  if (!signedIn) return showSignIn(null, route, provider);
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

// A 401 from any read: the access token is gone (ui.js dropped it); sign in again, then back here.
// With a provider, a token the ledger found expired goes back through the provider instead (with
// the ID token as the hint, which ui.js kept), unless renew() finds the clocks disagree.
whenSignedOut((message) => {
  if (provider && /expired/.test(message)) {
    try { renew(provider, { refused: true }).catch((e) => showSignIn(e.message, route, provider)); return; } catch (e) { message = e.message; }
  }
  showSignIn(message, route, provider);
});
$('signout').addEventListener('click', async () => {
  history.replaceState(null, '', '#/collaborations');   // the next sign-in starts at the list
  if (await signOut(provider)) return;                  // the provider's end-session page, then back here
  route();
  say(provider ? 'Signed out of the console. Your session at the identity provider goes on (it names no end-session endpoint, or could not be reached): sign out there too on a shared computer.' : 'Signed out.');
});
// The skip link focuses <main> without touching the hash (the hash is the route).
document.querySelector('.skip-link').addEventListener('click', (ev) => { ev.preventDefault(); $('main').focus(); });

// The address's query (the provider's answer: a code and state; or the end-session's return), read
// and removed from the address before anything is awaited: whatever follows, even the ledger
// failing to say which provider, no code stays in the address bar or the tab's history.
const query = new URLSearchParams(location.search);
if (location.search) history.replaceState(null, '', location.pathname + location.hash);

// Where the ledger names an identity provider: an expired token goes back through it before a
// call, and the query may be its answer; any other query is ignored.
let unknown = null;   // why the page cannot tell how to sign in
try { provider = await loadProvider(); } catch (e) { unknown = e; }
if (provider) whenExpired(() => renew(provider));
window.addEventListener('hashchange', route);
if (unknown) {
  $('nav').hidden = true;
  report(unknown);
} else if (provider && isReturn(query)) {
  $('nav').hidden = true;
  say('Signing in…');
  try {
    await finishSignIn(provider, query);
    route();
    say('Signed in.');
  } catch (e) {
    showSignIn(e.message, route, provider);
  }
} else {
  const signedOut = provider && isSignOutReturn(query);
  route();
  if (signedOut) say(`Signed out, here and at ${issuerHost(provider)}.`);
}
