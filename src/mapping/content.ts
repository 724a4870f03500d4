import { captureRank, type CaptureLevel } from '../core/capture-levels.js';
import { contentDigest } from '../capture/canonical-json.js';
import { redactText, redactValue } from '../capture/redact.js';
import { levelFor, type CapturePolicy } from '../capture/policy.js';

/**
 * Content helpers shared by the mappers. Each returns `undefined` when the
 * level in force does not admit the content, so a mapper can spread the result
 * and never decide privacy itself.
 */
export function atLeast(policy: CapturePolicy, type: string, level: CaptureLevel): boolean {
  return captureRank(levelFor(policy, type)) >= captureRank(level);
}

/** Digest of the ORIGINAL content (before any redaction), at metadata and above. */
export function digestOf(policy: CapturePolicy, type: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return atLeast(policy, type, 'metadata') ? contentDigest(value) : undefined;
}

/** Text gated `redacted`: redacted at `redacted`, verbatim at `full`, absent below. */
export function gatedText(policy: CapturePolicy, type: string, text: unknown): string | undefined {
  if (typeof text !== 'string' || text.length === 0) return undefined;
  const level = levelFor(policy, type);
  if (level === 'full') return text;
  if (level === 'redacted') return redactText(text, policy.redact);
  return undefined;
}

/** A structured value gated `redacted` (e.g. tool args): redacted deep copy at `redacted`. */
export function gatedValue(policy: CapturePolicy, type: string, value: unknown): unknown {
  if (value === undefined || value === null) return undefined;
  return levelFor(policy, type) === 'redacted' ? redactValue(value, policy.redact) : undefined;
}

/** Content gated `full`: verbatim only at `full`. */
export function fullOnly<T>(policy: CapturePolicy, type: string, value: T): T | undefined {
  return levelFor(policy, type) === 'full' ? value : undefined;
}

/** Drops `undefined` members so deep equality and JSON agree. */
export function compact<T extends Record<string, unknown>>(obj: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out as T;
}
