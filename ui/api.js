/**
 * The page's requests to its daemon, and its token. The token comes in the
 * URL fragment (`#token=…`, which a browser never sends), is kept in
 * sessionStorage only, and rides in the Authorization header of every
 * request with data (never a cookie, never a query parameter).
 */

export const TOKEN_KEY = 'hermes-aep.token';

/** Take the token from the fragment (then drop the fragment from the address bar), else from sessionStorage. */
export function takeToken(loc, storage, hist) {
  const m = /(?:^#|&)token=([^&]*)/.exec(loc.hash);
  if (m !== null) {
    let t = '';
    try {
      t = decodeURIComponent(m[1]);
    } catch {
      /* a mangled fragment is no token */
    }
    if (t !== '') storage.setItem(TOKEN_KEY, t);
    hist.replaceState(null, '', `${loc.pathname}${loc.search}`);
  }
  return storage.getItem(TOKEN_KEY) ?? undefined;
}

export function authHeaders(token) {
  return token !== undefined ? { authorization: `Bearer ${token}` } : {};
}

async function body(res) {
  try {
    return await res.json();
  } catch {
    return {};
  }
}

/** `GET /ui/state`: `{ok: true, state}` or `{ok: false, status, error}`. */
export async function fetchState(token) {
  try {
    const res = await fetch('/ui/state', { headers: authHeaders(token), cache: 'no-store' });
    const j = await body(res);
    return res.ok ? { ok: true, state: j } : { ok: false, status: res.status, error: typeof j.error === 'string' ? j.error : `http ${res.status}` };
  } catch {
    return { ok: false, status: 0, error: 'unreachable' };
  }
}

/**
 * `POST /ui/command` (answer a gate card, or steer a session): the daemon's verdict as one line for
 * `answer-result`, and whether it was accepted.
 */
export async function sendCommand(token, command) {
  let res;
  try {
    res = await fetch('/ui/command', {
      method: 'POST',
      headers: { ...authHeaders(token), 'content-type': 'application/json' },
      body: JSON.stringify(command),
      cache: 'no-store',
      // the daemon answers within its ack window (12 s); past 20 s the request never left the browser: every open tab
      // of this page keeps one connection, and a browser opens at most six to one host
      signal: AbortSignal.timeout(20_000),
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'TimeoutError')
      return { accepted: false, text: 'no answer within 20 s: too many tabs of this page open? (a browser opens six connections to one host)' };
    return { accepted: false, text: 'not sent: the daemon is unreachable' };
  }
  const j = await body(res);
  if (!res.ok) {
    const what = typeof j.error === 'string' ? j.error : `http ${res.status}`;
    return { accepted: false, text: `refused (${what})${typeof j.detail === 'string' ? `: ${j.detail}` : ''}` };
  }
  if (j.outcome === 'accepted') return { accepted: true, text: 'accepted' };
  const reason = typeof j.reason === 'string' ? `: ${j.reason}` : '';
  const hint = typeof j.hint === 'string' ? ` (${j.hint})` : '';
  return { accepted: false, text: `rejected${reason}${hint}` };
}
