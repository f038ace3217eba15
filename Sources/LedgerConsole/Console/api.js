// The ledger's API as the console reads it: the bearer token, GETs and the API's errors.
// The token lives only in sessionStorage (this tab) and is sent only to this origin.

const TOKEN_KEY = 'participant-ledger.console.token';
export const PAGE = 50;   // rows per table page

export function getToken() { try { return sessionStorage.getItem(TOKEN_KEY); } catch { return null; } }
export function setToken(t) { try { sessionStorage.setItem(TOKEN_KEY, t); } catch { /* storage off: nothing kept */ } }
export function dropToken() { try { sessionStorage.removeItem(TOKEN_KEY); } catch { /* ignore */ } }

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
