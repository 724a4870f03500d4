/**
 * The stream: `GET /stream` read with fetch (so the token rides in the
 * Authorization header; EventSource cannot send one), its body parsed as
 * `text/event-stream` here. It reconnects with jittered backoff when the
 * stream ends, breaks or goes quiet, asking `query()` each time where to
 * resume. A 4xx refusal stops it (a token will not appear by retrying).
 */

/** Incremental SSE parser: text chunks cut anywhere in, one callback per dispatched message. */
export function sseParser(onMessage, onComment) {
  let buf = '';
  let data = [];
  let event = '';
  let id = '';
  let sawId = false;
  const line = (l) => {
    if (l === '') {
      if (data.length > 0) onMessage({ event: event || 'message', data: data.join('\n'), id, hasId: sawId });
      data = [];
      event = '';
      sawId = false;
      return;
    }
    if (l.startsWith(':')) return onComment?.(l.slice(l.startsWith(': ') ? 2 : 1));
    const c = l.indexOf(':');
    const field = c === -1 ? l : l.slice(0, c);
    let value = c === -1 ? '' : l.slice(c + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\u0000')) {
      id = value;
      sawId = true;
    }
  };
  return (chunk) => {
    buf += chunk;
    // a CR at the very end may be the first half of CRLF: keep it for the next chunk
    const re = /\r\n|\r(?!$)|\n/g;
    let from = 0;
    for (let m = re.exec(buf); m !== null; m = re.exec(buf)) {
      line(buf.slice(from, m.index));
      from = m.index + m[0].length;
    }
    buf = buf.slice(from);
  };
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * Follow the stream until `signal` aborts. `on.state` gets 'live' | 'reconnecting' | 'disconnected' (with a reason),
 * `on.message` each SSE message, `on.comment` each comment line.
 */
export async function follow({ url, headers, query, on, signal, idleMs = 45_000, backoff = { min: 250, max: 5_000 } }) {
  let delay = backoff.min;
  for (;;) {
    if (signal.aborted) return;
    const attempt = new AbortController();
    const stop = () => attempt.abort();
    signal.addEventListener('abort', stop, { once: true });
    let idle;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(stop, idleMs);
    };
    try {
      arm();
      const res = await fetch(`${url}?${query()}`, { headers: { ...headers(), accept: 'text/event-stream' }, cache: 'no-store', signal: attempt.signal });
      if (res.status >= 400 && res.status < 500) {
        let detail = '';
        try {
          const j = await res.json();
          detail = typeof j.error === 'string' ? j.error : '';
        } catch {
          /* no JSON body: the status says it */
        }
        on.state('disconnected', { status: res.status, error: detail });
        return;
      }
      if (!res.ok || res.body === null) throw new Error(`status ${res.status}`);
      on.state('live');
      delay = backoff.min;
      const push = sseParser(on.message, on.comment);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        arm();
        push(value);
      }
    } catch {
      /* a refused connection, a break, an idle timeout: reconnect below */
    } finally {
      clearTimeout(idle);
      signal.removeEventListener('abort', stop);
    }
    if (signal.aborted) return;
    on.state('reconnecting');
    await sleep(Math.round(delay * (0.5 + Math.random() / 2)), signal);
    delay = Math.min(backoff.max, delay * 2);
  }
}
