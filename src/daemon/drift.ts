import { TELEMETRY_SCHEMA_VERSION } from '../hermes/envelope.js';
import { identifierHasSecret } from '../capture/identifier-secrets.js';
import type { Logger } from '../core/logger.js';

/**
 * Watches the drift sentinel: the telemetry schema version a hook declares,
 * as the mapping read it (`HookFacts.schemaVersion()`). A payload
 * without it, or with another value, is still mapped; it is counted here and
 * logged once per distinct situation, so a Hermes upgrade is noticed without
 * flooding the log.
 */
export class DriftWatch {
  missing = 0;
  mismatched = 0;
  private readonly seen = new Set<string>();

  constructor(private readonly log: Logger) {}

  /** `hook`: the hook's name as sent; `v`: the schema version it declared (undefined: none) */
  check(hook: string, v: unknown): void {
    if (v === TELEMETRY_SCHEMA_VERSION) return;
    if (v === undefined) {
      this.missing++;
      this.once('missing', () => this.log.warn('hermes payload without drift sentinel; mapped anyway', { hook: shownAs(hook, HOOK_NAME_FORM) }));
      return;
    }
    this.mismatched++;
    const shown = typeof v === 'string' ? shownAs(v, SENTINEL_FORM) : typeof v;
    this.once(`value:${shown}`, () =>
      this.log.warn('hermes drift sentinel differs from the pinned one; mapped anyway, re-verify the mapping', {
        expected: TELEMETRY_SCHEMA_VERSION,
        got: shown,
      }),
    );
  }

  private once(key: string, fn: () => void): void {
    if (this.seen.has(key) || this.seen.size >= 32) return;
    this.seen.add(key);
    fn();
  }

  stats(): { missing: number; mismatched: number; expected: string } {
    return { missing: this.missing, mismatched: this.mismatched, expected: TELEMETRY_SCHEMA_VERSION };
  }
}

/** A drift sentinel's own form (`hermes.observer.v1`): dotted lower-case words, then a version. */
const SENTINEL_FORM = /^[a-z][a-z0-9]{0,31}(?:\.[a-z][a-z0-9]{0,31}){0,3}\.v\d{1,6}$/;
/** A hook name's form (`pre_tool_call`). */
const HOOK_NAME_FORM = /^[a-z][a-z_]{0,63}$/;

/**
 * A value from the payload as a diagnostic may show it: itself only in the form such a value has and when the secret
 * detector finds nothing in it (a sentinel field can carry anything); else its length, never its text.
 */
function shownAs(s: string, form: RegExp): string {
  return form.test(s) && !identifierHasSecret(s) ? s : `<${s.length} chars>`;
}
