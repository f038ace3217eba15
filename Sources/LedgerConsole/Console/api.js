// The ledger's API as the console reads it: the bearer token, GETs and the API's errors.
// The token lives only in sessionStorage (this tab) and is sent only to this origin.

const TOKEN_KEY = 'participant-ledger.console.token';
const EXPIRES_KEY = 'participant-ledger.console.expires';   // ms since 1970; a provider's token only
export const PAGE = 50;   // rows per table page

export function getToken() { try { return sessionStorage.getItem(TOKEN_KEY); } catch { return null; } }
// expiresAt: when to renew the token (a provider's); null: never (a pasted token).
export function setToken(t, expiresAt = null) {
  try {
    sessionStorage.setItem(TOKEN_KEY, t);
    if (expiresAt) sessionStorage.setItem(EXPIRES_KEY, String(expiresAt)); else sessionStorage.removeItem(EXPIRES_KEY);
  } catch { /* storage off: nothing kept */ }
}
// Drops the access token and its expiry, nothing else: after a 401, a provider's sign-in keeps its
// ID token (the hint a renewal sends) and its renewal marker (oidc.js).
export function dropAccessToken() {
  try {
    sessionStorage.removeItem(TOKEN_KEY);
    sessionStorage.removeItem(EXPIRES_KEY);
  } catch { /* ignore */ }
}
// Drops everything the console keeps in this tab (the sign-in's keys all begin so): signing out.
export function dropToken() {
  try {
    for (const k of Object.keys(sessionStorage)) if (k.startsWith('participant-ledger.console.')) sessionStorage.removeItem(k);
  } catch { /* ignore */ }
}
function expired() {
  let at = 0;
  try { at = Number(sessionStorage.getItem(EXPIRES_KEY)); } catch { /* storage off */ }
  return at > 0 && Date.now() >= at;
}

// What a call does when the tab's token has expired: console.js sets it (back through the
// provider: the page leaves, and the returned promise never settles).
let renewal = null;
export function whenExpired(handler) { renewal = handler; }

// An API refusal: the HTTP status (0 when the ledger could not be reached) and the API's own
// error code and message.
export class ApiError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

// path?k=v…, leaving out null, undefined and empty values.
export function url(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== null && v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

// GET with the bearer token. Answers JSON, or the Response itself when raw; API errors throw
// ApiError with the API's own code and message. A 503 view_behind is retried twice.
export async function api(path, { raw = false, accept = 'application/json', token = getToken() } = {}) {
  if (renewal && token && token === getToken() && expired()) await renewal();
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
