import { code, extraOf, type HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import { compact, gatedText } from './content.js';
import type { MappedEvent } from './types.js';
import { X_HERMES } from '../aep/lifecycle.js';

/** `on_session_start` (brand-new sessions only) → `session.started`. */
export function mapSessionStart(env: HookEnvelope, policy: CapturePolicy): MappedEvent[] {
  const type = 'session.started';
  return [{ type, data: compact({ client: { name: 'hermes' }, cwd: gatedText(policy, type, env.cwd) }) }];
}

/** `on_session_finalize` ALONE ends the session; vendor free-text reasons stay out of the enum. */
export function mapSessionFinalize(_env: HookEnvelope, _policy: CapturePolicy): MappedEvent[] {
  return [{ type: 'session.ended', data: { reason: 'normal' } }];
}

/** `on_session_reset` carries the SUCCESSOR's id: a vendor-plane fact, never an end. */
export function mapSessionReset(env: HookEnvelope, _policy: CapturePolicy): MappedEvent[] {
  // a vendor reason code (`new_session`, …): identifier-shaped, else left out
  return [{ type: X_HERMES.sessionReset, data: compact({ reason: code(extraOf(env).reason) }) }];
}
