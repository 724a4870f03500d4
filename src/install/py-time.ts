/**
 * Timestamps exactly as Hermes writes them into the allowlist:
 * `datetime.fromtimestamp(t, tz=timezone.utc).isoformat().replace("+00:00", "Z")`
 * (whole seconds print without a fraction, anything else with six digits).
 * `hermes hooks doctor` reports "script modified since approval" when the
 * script's mtime, formatted this way, is later than the recorded one, so the
 * recorded value must match to the microsecond.
 */

/** C's round(): half away from zero (for the non-negative values used here). */
function cRound(x: number): number {
  const t = Math.trunc(x);
  return x - t >= 0.5 ? t + 1 : t;
}

/** CPython's _PyTime_ROUND_HALF_EVEN. */
function roundHalfEven(x: number): number {
  const r = cRound(x);
  return Math.abs(x - r) === 0.5 ? 2 * cRound(x / 2) : r;
}

/** Python's `os.stat().st_mtime` float for a stat's seconds and nanoseconds. */
export function pythonStatFloat(sec: bigint, nsec: bigint): number {
  return Number(sec) + Number(nsec) * 1e-9;
}

/** `datetime.fromtimestamp(t, tz=utc).isoformat()` with `Z`, for a POSIX timestamp float (t >= 0). */
export function pythonIsoUtc(t: number): string {
  let whole = Math.trunc(t);
  let us = roundHalfEven((t - whole) * 1e6);
  if (us >= 1e6) {
    us -= 1e6;
    whole += 1;
  }
  const base = new Date(whole * 1000).toISOString().slice(0, 19);
  return us === 0 ? `${base}Z` : `${base}.${String(us).padStart(6, '0')}Z`;
}

/** The mtime Hermes would record for a file with this bigint stat. */
export function pythonMtimeIso(st: { mtimeNs: bigint }): string {
  const sec = st.mtimeNs / 1_000_000_000n;
  return pythonIsoUtc(pythonStatFloat(sec, st.mtimeNs - sec * 1_000_000_000n));
}

/** `datetime.now(tz=utc).isoformat()` with `Z`, for approved_at. */
export function pythonNowIso(nowMs: number = Date.now()): string {
  return pythonIsoUtc(nowMs / 1000);
}
