// The sign-in view. With an identity provider (oidc.js): a button that sends the auditor there,
// and, where this tab still holds an ID token (an account the ledger refused), one to sign out
// there first. Without one: a bearer token pasted into a form, kept only once the API accepts it.
import { $, el } from './dom.js';
import { api, ApiError, setToken } from './api.js';
import { begin, heading, report, say, clearMessages } from './ui.js';
import { startSignIn, signOut, canSignOutThere, issuerHost } from './oidc.js';

// Shows the view (with message as an error, if any); once signed in with a pasted token, calls
// signedIn() (the router) or, where the address names no view yet, moves to the collaborations list.
export function showSignIn(message, signedIn, provider) {
  $('nav').hidden = true;
  const { main } = begin('signin', 'Sign in');
  if (provider) providerSignIn(main, provider);
  else tokenSignIn(main, signedIn);
  if (message) report(new Error(message));
}

function providerSignIn(main, provider) {
  const host = issuerHost(provider);
  const go = el('button', { type: 'button', id: 'signin-provider' }, `Sign in with ${host}`);
  const section = el('section', { id: 'signin', 'aria-labelledby': 'view-title' }, heading('Sign in'),
    el('p', { id: 'signin-help', class: 'help' },
      `You sign in at your organisation's identity provider, ${host}, which sends you back here. `
      + 'The ledger then checks that your account has the auditor role. Your session is kept in this browser tab only.'),
    go);
  if (canSignOutThere()) {
    section.append(el('p', { class: 'help' }, 'To sign in as another account, sign out at the identity provider first.'),
      el('button', { type: 'button', id: 'signout-provider' }, `Sign out at ${host}`));
  }
  main.append(section);
  go.addEventListener('click', () => {
    clearMessages();
    say(`Going to ${host}…`);
    startSignIn(provider).catch((e) => { say(''); report(e); });
  });
  const out = $('signout-provider');
  if (out) {
    out.addEventListener('click', async () => {
      clearMessages();
      if (!(await signOut(provider))) showSignIn(null, null, provider);
    });
  }
  go.focus();
}

function tokenSignIn(main, signedIn) {
  const input = el('textarea', { id: 'token-input', rows: '4', autocomplete: 'off', spellcheck: 'false', required: true,
    'aria-describedby': 'token-help' });
  const form = el('form', { id: 'signin-form' },
    el('label', { for: 'token-input' }, 'Bearer token (JWT)'),
    el('p', { id: 'token-help', class: 'help' }, 'It is kept in this browser tab only (sessionStorage) and sent only to this ledger.'),
    input, el('button', { type: 'submit', id: 'signin-submit' }, 'Sign in'));
  main.append(el('section', { id: 'signin', 'aria-labelledby': 'view-title' }, heading('Sign in'), form));
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
      if (e instanceof ApiError && e.status === 401) report(new Error(`The ledger refused this token: ${e.message} (${e.code}, HTTP 401). Paste a current token for this ledger (\`ledger token --account NAME --role auditor\` prints one).`));
      else report(e);
      return;
    }
    setToken(token);
    say('Signed in.');
    if (!location.hash.startsWith('#/')) location.hash = '#/collaborations'; else signedIn();
  });
  input.focus();
}
