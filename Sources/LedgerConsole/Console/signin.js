// The sign-in view: a bearer token pasted into a form, kept only once the API accepts it.
import { $, el } from './dom.js';
import { api, ApiError, setToken } from './api.js';
import { begin, heading, report, say, clearMessages } from './ui.js';

// Shows the form (with message as an error, if any); once signed in, calls signedIn() (the
// router) or, where the address names no view yet, moves to the collaborations list.
export function showSignIn(message, signedIn) {
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
    if (!location.hash.startsWith('#/')) location.hash = '#/collaborations'; else signedIn();
  });
  input.focus();
}
