// Signing in through the organisation's identity provider (issue 69): OpenID Connect, the
// authorization code flow with PKCE (RFC 7636, S256), as a public client (no secret here).
// The ledger says which provider at /console/provider.json ({"provider": null}: none, the token
// is pasted instead, signin.js). The redirect URI is the console's own address, /console.
// Contracts:
//   - Before leaving for the provider, the tab keeps (sessionStorage) the PKCE verifier, state,
//     nonce and the route to come back to; on return they are checked and dropped.
//   - The code and state leave the address bar before anything else happens (replaceState).
//   - Only the access token (and its expiry) and the ID token (the hint sign-out needs) are kept,
//     in sessionStorage; a refresh token, if the provider sends one, is never kept.
//   - The ledger checks the access token as it checks every provider token; signing in here also
//     asks it for the access audit, so an account without the auditor role is refused at once.
import { api, ApiError, setToken, dropToken } from './api.js';

const PENDING_KEY = 'participant-ledger.console.signin';     // the sign-in under way
const ID_TOKEN_KEY = 'participant-ledger.console.id-token';  // the hint for the end-session endpoint
const RENEWED_KEY = 'participant-ledger.console.renewed';    // when the session was last renewed
const SIGNOUT_KEY = 'participant-ledger.console.signout';    // the state of a sign-out under way
const RENEW_EARLY_MS = 15000;   // a token this close to its expiry is renewed before a call

const store = {
  get(k) { try { return sessionStorage.getItem(k); } catch { return null; } },
  set(k, v) { try { sessionStorage.setItem(k, v); } catch { /* storage off: nothing kept */ } },
  drop(k) { try { sessionStorage.removeItem(k); } catch { /* ignore */ } },
};

// What the ledger says: the provider, or null (a pasted token).
export async function loadProvider() {
  const res = await fetch('/console/provider.json', { cache: 'no-store', credentials: 'omit' });
  if (!res.ok) throw new Error(`the ledger did not say how to sign in (GET /console/provider.json: HTTP ${res.status}); reload the page`);
  return (await res.json()).provider || null;
}

export const redirectURI = () => location.origin + '/console';
export const issuerHost = (provider) => { try { return new URL(provider.issuer).host; } catch { return provider.issuer; } };

// The provider's discovery document, checked: its issuer is the configured one, and the token
// endpoint is on the issuer's origin (the only one the page's policy lets it fetch).
async function discover(provider) {
  const where = provider.issuer.replace(/\/$/, '') + '/.well-known/openid-configuration';
  let meta;
  try {
    const res = await fetch(where, { cache: 'no-store', credentials: 'omit' });
    if (!res.ok) throw new Error('HTTP ' + res.status);
    meta = await res.json();
  } catch (e) {
    throw new Error(`The identity provider could not be reached at ${where} (${e.message}). Try again in a moment; if it persists, ask the ledger's operator to check LEDGER_OIDC_ISSUER.`);
  }
  if (meta.issuer !== provider.issuer) {
    throw new Error(`The identity provider calls itself ${meta.issuer}, not ${provider.issuer}: ask the ledger's operator to set LEDGER_OIDC_ISSUER to its issuer exactly.`);
  }
  const origin = new URL(provider.issuer).origin;
  if (!meta.authorization_endpoint || !meta.token_endpoint || new URL(meta.token_endpoint).origin !== origin) {
    throw new Error(`The identity provider's token endpoint (${meta.token_endpoint}) is not on its issuer's origin ${origin}, the only one this page may reach: ask the ledger's operator.`);
  }
  const methods = meta.code_challenge_methods_supported;
  if (Array.isArray(methods) && !methods.includes('S256')) {
    throw new Error('The identity provider does not offer PKCE with S256, which the console needs: ask its administrator to enable it.');
  }
  return meta;
}

const b64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const random = (n) => b64url(crypto.getRandomValues(new Uint8Array(n)));

// Sends the tab to the provider's sign-in. silent: prompt=none (with the ID token as the hint), for
// a session that expired: the provider answers at once while its own session lasts, and with an
// error (login_required, …) otherwise, which sends the tab to its login page. Resolves never.
export async function startSignIn(provider, { silent = false, hash = location.hash } = {}) {
  if (!crypto.subtle) {
    throw new Error('This page is not in a secure context (HTTPS, or a loopback address), where the browser offers the hashing sign-in needs: open the console over HTTPS.');
  }
  const meta = await discover(provider);
  const pending = { state: random(32), nonce: random(32), verifier: random(48), hash: hash || '', silent };
  const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pending.verifier)));
  store.set(PENDING_KEY, JSON.stringify(pending));
  const q = new URLSearchParams({
    response_type: 'code', client_id: provider.clientId, redirect_uri: redirectURI(), scope: provider.scope,
    state: pending.state, nonce: pending.nonce, code_challenge: challenge, code_challenge_method: 'S256',
  });
  if (provider.resource) q.set('resource', provider.resource);
  if (silent) {
    q.set('prompt', 'none');
    const hint = store.get(ID_TOKEN_KEY);   // which session to renew (glewlwyd requires it with prompt=none)
    if (hint) q.set('id_token_hint', hint);
  }
  location.assign(meta.authorization_endpoint + (meta.authorization_endpoint.includes('?') ? '&' : '?') + q);
  return new Promise(() => {});
}

// Whether the address is the provider's answer (a code or an error, with a state).
export function isReturn() {
  const q = new URLSearchParams(location.search);
  return q.has('state') && (q.has('code') || q.has('error'));
}

const claimsOf = (jwt) => {
  try { return JSON.parse(atob(jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))); } catch { return null; }
};

// The provider's answer: the address cleaned first, then the checks, the exchange, the ledger's
// verdict. Answers the route to show; throws an Error whose message says what to do.
export async function finishSignIn(provider) {
  const q = new URLSearchParams(location.search);
  const pending = JSON.parse(store.get(PENDING_KEY) || 'null');
  store.drop(PENDING_KEY);
  history.replaceState(null, '', location.pathname + (pending ? pending.hash : ''));
  if (!pending || q.get('state') !== pending.state) {
    throw new Error("The identity provider's answer does not belong to a sign-in this tab started (its state differs), so nothing was kept: sign in again.");
  }
  if (q.has('error')) {
    // A renewal the provider will not answer without the auditor: its login page, once.
    if (pending.silent) return startSignIn(provider, { hash: pending.hash });
    const why = q.get('error') + (q.get('error_description') ? ` (${q.get('error_description')})` : '');
    throw new Error(`The identity provider refused the sign-in: ${why}. Sign in again, or ask its administrator whether this account may use the console.`);
  }
  const meta = await discover(provider);
  const form = new URLSearchParams({
    grant_type: 'authorization_code', code: q.get('code'), redirect_uri: redirectURI(), client_id: provider.clientId,
    code_verifier: pending.verifier,
  });
  if (provider.resource) form.set('resource', provider.resource);
  let answer;
  try {
    const res = await fetch(meta.token_endpoint, {
      method: 'POST', body: form, cache: 'no-store', credentials: 'omit', headers: { Accept: 'application/json' },
    });
    answer = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(answer.error ? answer.error + (answer.error_description ? ` (${answer.error_description})` : '') : 'HTTP ' + res.status);
  } catch (e) {
    throw new Error(`The identity provider did not exchange the sign-in's code for a token: ${e.message}. Sign in again.`);
  }
  const id = answer.id_token && claimsOf(answer.id_token);
  const audiences = id ? [].concat(id.aud) : [];
  if (!id || id.nonce !== pending.nonce || id.iss !== provider.issuer || !audiences.includes(provider.clientId) || !answer.access_token) {
    throw new Error("The identity provider's ID token was not issued for this sign-in (nonce, issuer or audience differ), so nothing was kept: sign in again; if it happens again, tell the ledger's operator.");
  }
  store.set(ID_TOKEN_KEY, answer.id_token);
  await admit(provider, answer.access_token);
  const expiresIn = Number(answer.expires_in);
  setToken(answer.access_token, expiresIn > 0 ? Date.now() + expiresIn * 1000 - RENEW_EARLY_MS : null);
  if (pending.silent) store.set(RENEWED_KEY, String(Date.now()));
  return pending.hash;
}

// The ledger's verdict on the token: the access audit answers only an auditor. A refusal keeps
// nothing but the ID token (to sign out at the provider and come back as someone else).
async function admit(provider, token) {
  try {
    await api('/v1/audit/access?limit=1', { token });
  } catch (e) {
    if (!(e instanceof ApiError) || ![401, 403].includes(e.status)) throw e;
    const because = `${e.message} (${e.code}, HTTP ${e.status})`;
    if (e.status === 401) {
      throw new Error(`The ledger refused the token ${issuerHost(provider)} issued: ${because}. Ask the ledger's operator to check that the provider issues the console's tokens for this ledger (LEDGER_JWT_AUDIENCE, LEDGER_JWT_ISSUER, LEDGER_JWKS_URL), then sign in again.`);
    }
    throw new Error(`The ledger refused this account: ${because}. This console is for auditors: sign out at the identity provider and sign in as an account with the auditor role, or ask its administrator to give this account that role.`);
  }
}

// An expired session goes back through the provider (silently, while the provider's own session
// lasts), unless it was renewed a minute ago and is expired already: then the clocks disagree.
export function renew(provider) {
  const last = Number(store.get(RENEWED_KEY)) || 0;
  if (Date.now() - last < 60000) {
    dropToken();
    throw new Error('The ledger finds the token the identity provider just renewed expired already: the ledger\'s and the provider\'s clocks disagree. Sign in again; if it happens again, tell the ledger\'s operator.');
  }
  return startSignIn(provider, { silent: true });
}

// Whether the address is the provider's return from signing out (its state is the one this tab
// sent); the state is dropped either way.
export function isSignOutReturn() {
  const state = new URLSearchParams(location.search).get('state');
  const sent = store.get(SIGNOUT_KEY);
  store.drop(SIGNOUT_KEY);
  return !!state && state === sent;
}

// Whether this tab holds an ID token to sign out at the provider with.
export const canSignOutThere = () => !!store.get(ID_TOKEN_KEY);

// Signs out: the token dropped here, then the provider's end-session endpoint where it has one
// (true: the page leaves for it). The provider sends the tab back to /console.
export async function signOut(provider) {
  const hint = store.get(ID_TOKEN_KEY);
  dropToken();
  store.drop(ID_TOKEN_KEY);
  store.drop(RENEWED_KEY);
  if (!provider || !hint) return false;
  let meta;
  try { meta = await discover(provider); } catch { return false; }
  if (!meta.end_session_endpoint) return false;
  // A state, so the return can be told from any other visit (glewlwyd sends the tab back only with one).
  const state = random(32);
  store.set(SIGNOUT_KEY, state);
  const q = new URLSearchParams({ id_token_hint: hint, post_logout_redirect_uri: redirectURI(), client_id: provider.clientId, state });
  location.assign(meta.end_session_endpoint + (meta.end_session_endpoint.includes('?') ? '&' : '?') + q);
  return true;
}
