/**
 * AEP capture levels (AEP-0001 §8.2): how much operation content an Event may
 * carry. The order is normative (`none < metadata < redacted < full`) and every
 * gating decision in this module family compares ranks rather than strings.
 */

/** The four capture levels in ascending order, so a level's index is its rank. */
export const CAPTURE_LEVELS = ['none', 'metadata', 'redacted', 'full'] as const;

/** One AEP capture level; the envelope default is `metadata` (AEP-0001 §8.2d). */
export type CaptureLevel = (typeof CAPTURE_LEVELS)[number];

/** The envelope default level, used when an Event omits `capture`. */
export const DEFAULT_CAPTURE: CaptureLevel = 'metadata';

const RANKS: Readonly<Record<CaptureLevel, number>> = {
  none: 0,
  metadata: 1,
  redacted: 2,
  full: 3,
};

/** Numeric rank of a level, so callers compare levels without string logic. */
export function captureRank(level: CaptureLevel): number {
  return RANKS[level];
}

/** The lower of two levels: a ceiling and a claim combine by taking the minimum. */
export function minCapture(a: CaptureLevel, b: CaptureLevel): CaptureLevel {
  return RANKS[a] <= RANKS[b] ? a : b;
}

/** Runtime guard for untrusted input (wire events, config files). */
export function isCaptureLevel(x: unknown): x is CaptureLevel {
  return typeof x === 'string' && Object.prototype.hasOwnProperty.call(RANKS, x);
}
