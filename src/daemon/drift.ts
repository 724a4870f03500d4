import { TELEMETRY_SCHEMA_VERSION, type HookEnvelope } from '../hermes/envelope.js';
import type { Logger } from './diagnostics.js';

/**
 * Watches the drift sentinel (`extra.telemetry_schema_version`). A payload
 * without it, or with another value, is still mapped; it is counted here and
 * logged once per distinct situation, so a Hermes upgrade is noticed without
 * flooding the log.
 */
export class DriftWatch {
  missing = 0;
  mismatched = 0;
  private readonly seen = new Set<string>();

  constructor(private readonly log: Logger) {}

  check(env: HookEnvelope): void {
    const v = env.extra?.telemetry_schema_version;
    if (v === TELEMETRY_SCHEMA_VERSION) return;
    if (v === undefined) {
      this.missing++;
      this.once('missing', () => this.log.warn('hermes payload without drift sentinel; mapped anyway', { hook: safe(env.hook_event_name) }));
      return;
    }
    this.mismatched++;
    const shown = typeof v === 'string' ? safe(v) : typeof v;
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

/** Vendor identifiers only: anything else is shown as its shape, never its text. */
function safe(s: string): string {
  return /^[A-Za-z0-9._:-]{1,64}$/.test(s) ? s : `<${s.length} chars>`;
}
