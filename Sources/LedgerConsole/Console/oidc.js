// Signing in through the organisation's identity provider (issue 69): OpenID Connect, the
// authorization code flow with PKCE (RFC 7636, S256), as a public client (no secret here).
// The ledger says which provider at /console/provider.json ({"provider": null}: none, the token
// is pasted instead, signin.js). The redirect URI is the console's own address, /console.
// Contracts:
//   - Before leaving for the provider, the tab keeps (sessionStorage) the PKCE verifier, state,
//     nonce and the route to come back to; on return they are checked and dropped.
//   - The code and state leave the address bar before anything else happens (console.js reads the
//     query and removes it before it awaits anything; finishSignIn takes what it read).
//   - Only the access token (and its expiry) and the ID token (the hint a renewal and sign-out
//     send) are kept, in sessionStorage; a refresh token, if the provider sends one, is never kept.
//     A 401 drops the access token alone (api.js dropAccessToken): the ID token and the renewal
//     marker stay until sign-out, so a renewal after it still names the session to renew.
//   - The answer is refused unless its state is this tab's, its iss parameter (RFC 9207), where
//     present, is the provider's issuer, and the ID token's nonce, iss, aud, azp and exp hold.
//   - The ledger checks the access token as it checks every provider token; signing in here also
//     asks it for the access audit, so an account without the auditor role is refused at once.
import { api, ApiError, setToken, dropToken } from './api.js';

const PENDING_KEY = 'participant-ledger.console.signin';     // the sign-in under way
const ID_TOKEN_KEY = 'participant-ledger.console.id-token';  // the hint for the end-session endpoint
// The expiry (ms since 1970, this browser's clock: receipt + expires_in) of the access token the
// last silent renewal brought; absent after an interactive sign-in.
const RENEWED_KEY = 'participant-ledger.console.renewed';
const SIGNOUT_KEY = 'participant-ledger.console.signout';    // the state of a sign-out under way
const RENEW_EARLY_MS = 15000;   // a token this close to its expiry is renewed before a call
const LEEWAY_S = 30;            // clock skew tolerated on the ID token's exp, as the ledger does on its tokens

const store = {
  get(k) { try { return sessionStorage.getItem(k); } catch { return null; } },
  set(k, v) { try { sessionStorage.setItem(k, v); } catch { /* storage off: nothing kept */ } },
  drop(k) { try { sessionStorage.removeItem(k); } catch { /* ignore */ } },
};

// What the ledger says: the provider, or null (a pasted token). Throws an Error saying what to do
// when the ledger does not answer it.
export async function loadProvider() {
  let res;
  try {
    res = await fetch('/console/provider.json', { cache: 'no-store', credentials: 'omit' });
  } catch (e) {
    res = { ok: false, status: e.message };
  }
  if (!res.ok) throw new Error(`The ledger did not say how to sign in (GET /console/provider.json: ${typeof res.status === 'number' ? 'HTTP ' + res.status : res.status}): reload the page in a moment.`);
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

// Whether a sign-in is already sending the tab to the provider: a second one (two reads refused at
// once) would overwrite the first one's state and fail its return.
let leaving = false;

// Sends the tab to the provider's sign-in. silent: prompt=none (with the ID token as the hint), for
// a session that expired: the provider answers at once while its own session lasts, and with an
// error (login_required, …) otherwise, which sends the tab to its login page. Resolves never; once
// one is under way, another call only waits with it.
export async function startSignIn(provider, { silent = false, hash = location.hash } = {}) {
  if (leaving) return new Promise(() => {});
  if (!crypto.subtle) {
    throw new Error('This page is not in a secure context (HTTPS, or a loopback address), where the browser offers the hashing sign-in needs: open the console over HTTPS.');
  }
  leaving = true;
  let meta;
  try { meta = await discover(provider); } catch (e) { leaving = false; throw e; }
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

// Whether query (the address's, as console.js read it) is the provider's answer (a code or an
// error, with a state).
export function isReturn(q) {
  return q.has('state') && (q.has('code') || q.has('error'));
}

const claimsOf = (jwt) => {
  try { return JSON.parse(atob(jwt.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))); } catch { return null; }
};

// Why the ID token's claims (id, decoded) do not belong to the sign-in that sent nonce to the
// provider (OIDC Core 3.1.3.7), or null where they do: its nonce, its issuer, the console's client
// id among its audiences, and then the authorized party (azp) the console where there are several
// or one is named, and not expired (now: ms since 1970; LEEWAY_S of skew tolerated).
export function idTokenProblem(id, provider, nonce, now = Date.now()) {
  if (!id || typeof id !== 'object') return 'it could not be read';
  if (typeof id.nonce !== 'string' || id.nonce !== nonce) return 'its nonce is not the one this sign-in sent';
  if (id.iss !== provider.issuer) return `its issuer is ${id.iss}, not ${provider.issuer}`;
  const audiences = [].concat(id.aud);
  if (!audiences.includes(provider.clientId)) return `its audience is ${audiences.join(', ')}, without the console's client id ${provider.clientId}`;
  if ((audiences.length > 1 || id.azp !== undefined) && id.azp !== provider.clientId) {
    return `it names the audiences ${audiences.join(', ')} and its authorized party (azp) is ${id.azp === undefined ? 'missing' : id.azp}, not the console's client id ${provider.clientId}`;
  }
  if (typeof id.exp !== 'number') return 'it has no expiry (exp)';
  if (now >= (id.exp + LEEWAY_S) * 1000) {
    return `it expired at ${new Date(id.exp * 1000).toISOString()} by this computer's clock (${new Date(now).toISOString()}); if that clock is wrong, set it right`;
  }
  return null;
}

// The provider's answer, q (the query console.js read and already removed from the address): the
// route's hash restored, then the checks, the exchange, the ledger's verdict. Answers the route to
// show; throws an Error whose message says what to do.
export async function finishSignIn(provider, q) {
  const pending = JSON.parse(store.get(PENDING_KEY) || 'null');
  store.drop(PENDING_KEY);
  history.replaceState(null, '', location.pathname + (pending ? pending.hash : ''));
  if (!pending || q.get('state') !== pending.state) {
    throw new Error("The identity provider's answer does not belong to a sign-in this tab started (its state differs), so nothing was kept: sign in again.");
  }
  // RFC 9207: a provider that names itself in its answer must be the one this sign-in went to; any
  // other is answering in its place (a mix-up), and its code must not be sent anywhere.
  if (q.has('iss') && q.get('iss') !== provider.issuer) {
    throw new Error(`The answer says it comes from ${q.get('iss')}, not from ${provider.issuer}, where this sign-in went, so nothing was kept: sign in again; if it happens again, tell the ledger's operator.`);
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
  const why = !answer.access_token ? 'the answer holds no access token'
    : !answer.id_token ? 'the answer holds no ID token' : idTokenProblem(claimsOf(answer.id_token), provider, pending.nonce);
  if (why) {
    throw new Error(`The identity provider's ID token was not issued for this sign-in (${why}), so nothing was kept: sign in again; if it happens again, tell the ledger's operator.`);
  }
  store.set(ID_TOKEN_KEY, answer.id_token);
  await admit(provider, answer.access_token);
  const expiresIn = Number(answer.expires_in);
  const received = Date.now();
  setToken(answer.access_token, expiresIn > 0 ? received + expiresIn * 1000 - RENEW_EARLY_MS : null);
  if (pending.silent && expiresIn > 0) store.set(RENEWED_KEY, String(received + expiresIn * 1000));
  else store.drop(RENEWED_KEY);
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

// An expired session goes back through the provider, silently while the provider's own session
// lasts (a call made with a token about to expire; refused: after the ledger's 401 "expired").
// Except, refused, where the token the last renewal brought is not yet past its expiry (by the
// provider's expires_in and this browser's clock): the ledger's clock runs ahead of the provider's,
// and would refuse a renewed token alike, so throws saying so instead of renewing in a loop.
export function renew(provider, { refused = false } = {}) {
  const renewedUntil = Number(store.get(RENEWED_KEY)) || 0;
  if (refused && Date.now() < renewedUntil) {
    throw new Error('The ledger finds the token the identity provider just renewed expired already, before the expiry the provider gave it: the ledger\'s and the provider\'s clocks disagree. Sign in again; if it happens again, tell the ledger\'s operator.');
  }
  return startSignIn(provider, { silent: true });
}

// Whether query (the address's, as console.js read it) is the provider's return from signing out
// (its state is the one this tab sent); the state is dropped either way.
export function isSignOutReturn(q) {
  const state = q.get('state');
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
