/** Short human forms of durations, counts and amounts (pure; shared by the views). */

export function duration(ms) {
  if (ms === undefined || !Number.isFinite(ms)) return '';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)}m${String(Math.floor((ms % 60_000) / 1000)).padStart(2, '0')}s`;
  return `${Math.floor(ms / 3_600_000)}h${String(Math.floor((ms % 3_600_000) / 60_000)).padStart(2, '0')}m`;
}

/** A running time, whole seconds (what ticks once a second). */
export function elapsed(ms) {
  if (!Number.isFinite(ms)) return '';
  return ms < 60_000 ? `${Math.max(0, Math.floor(ms / 1000))}s` : duration(ms);
}

export function count(n) {
  if (n === undefined || !Number.isFinite(n)) return '';
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export function tokens(tin, tout) {
  return tin || tout ? `${count(tin ?? 0)} in / ${count(tout ?? 0)} out` : '';
}

/** USD; a trailing + when some call had no price (the sum understates it). */
export function usd(total, unpriced = 0) {
  if (total === undefined || (total === 0 && unpriced > 0)) return unpriced > 0 ? 'cost unknown' : '';
  if (total === 0) return '';
  const digits = total < 0.01 ? 4 : total < 1 ? 3 : 2;
  return `$${total.toFixed(digits)}${unpriced > 0 ? '+' : ''}`;
}

/** `42s left` (rounded up), `expired`, or '' without an expiry. */
export function timeLeft(expiresAt, now) {
  if (expiresAt === undefined) return '';
  const ms = expiresAt - now;
  return ms > 0 ? `${Math.ceil(ms / 1000)}s left` : 'expired';
}

/** A long id's distinctive tail. */
export function shortId(id, max = 12) {
  return typeof id === 'string' && id.length > max ? `…${id.slice(-(max - 1))}` : String(id ?? '');
}
