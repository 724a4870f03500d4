import type { CaptureLevel } from '../core/capture-levels.js';
import type { RedactOptions } from './redact.js';

/**
 * What the adapter may put on the wire: a ceiling for every event, with
 * per-category overrides (AEP-0003 §9 rule 1). The mapping reads it to decide
 * which content fields to build; the stamp writes the same level as the
 * event's `capture`, so the two can never disagree.
 */
export interface CapturePolicy {
  readonly ceiling: CaptureLevel;
  /** category (the first segment of the type, e.g. `attention`) → level */
  readonly categories: Readonly<Record<string, CaptureLevel>>;
  readonly redact: RedactOptions;
  /** the agent name used in structural prompt synthesis */
  readonly agent: string;
}

/** The adapter's default posture: capture `metadata`, `attention.*` at `redacted`. */
export function defaultPolicy(redact: RedactOptions = {}): CapturePolicy {
  return { ceiling: 'metadata', categories: { attention: 'redacted' }, redact, agent: 'hermes' };
}

/** The level honoured for one event type under a policy. */
export function levelFor(policy: CapturePolicy, type: string): CaptureLevel {
  const category = type.startsWith('x.') ? type.split('.').slice(0, 2).join('.') : (type.split('.')[0] ?? type);
  return policy.categories[category] ?? policy.ceiling;
}
