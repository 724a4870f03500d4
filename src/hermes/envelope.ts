import { createHash } from 'node:crypto';
import { z } from 'zod';

/** Lone UTF-16 surrogates (invalid Unicode) become U+FFFD, so ids encode cleanly everywhere. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
export const wellFormed = (s: string): string => s.replace(LONE_SURROGATE, '\uFFFD');

/**
 * The JSON object Hermes writes to a shell hook's stdin (agent/shell_hooks.py):
 * `{hook_event_name, tool_name, tool_input, session_id, cwd, extra}`.
 *
 * Validation is deliberately lenient about what Hermes may add later (unknown
 * keys pass through into `extra` handling untouched) and strict about what the
 * mapping relies on: the hook name must be a non-empty string, `extra` must be
 * an object when present.
 */
export const hookEnvelopeSchema = z
  .object({
    hook_event_name: z.string().min(1).max(128),
    tool_name: z.string().max(1024).nullish(),
    tool_input: z.unknown().optional(),
    session_id: z.string().max(4096).transform(wellFormed).nullish(),
    cwd: z.string().max(65536).nullish(),
    extra: z.record(z.string(), z.unknown()).nullish(),
  })
  .loose();

export type HookEnvelope = z.infer<typeof hookEnvelopeSchema>;

/** The drift sentinel Hermes 0.18.2 stamps into every live payload's `extra`. */
export const TELEMETRY_SCHEMA_VERSION = 'hermes.observer.v1';

/**
 * The hooks this adapter registers with Hermes: the design record's twelve,
 * and `post_api_request` (one per model call: model, timing, token usage),
 * which `install --no-model-calls` leaves out (MODEL_CALL_HOOK).
 */
export const REGISTERED_HOOKS = [
  'pre_tool_call',
  'post_tool_call',
  'pre_llm_call',
  'on_session_start',
  'on_session_end',
  'on_session_finalize',
  'on_session_reset',
  'subagent_start',
  'subagent_stop',
  'pre_approval_request',
  'post_approval_response',
  'api_request_error',
  'post_api_request',
] as const;

/** The one registered hook `install --no-model-calls` leaves out. */
export const MODEL_CALL_HOOK = 'post_api_request';

export type RegisteredHook = (typeof REGISTERED_HOOKS)[number];

/** Typed, defensive readers over `extra`: a wrong type reads as absent, never throws. */
export function extraOf(env: HookEnvelope): Record<string, unknown> {
  return env.extra ?? {};
}

const MAX_ID = 256;

/**
 * A non-empty string from `extra`, bounded: ids Hermes mints are short; a
 * longer value keeps a readable prefix plus a hash of the whole, so memory
 * and keys stay bounded while distinct values stay distinct.
 */
export function str(v: unknown): string | undefined {
  if (typeof v !== 'string' || v.length === 0) return undefined;
  if (v.length <= MAX_ID) return wellFormed(v);
  // cut on a code-point boundary: never half a surrogate pair
  const cut = [...v.slice(0, MAX_ID - 17)];
  if (cut.length > 0 && /[\uD800-\uDBFF]$/.test(cut[cut.length - 1]!)) cut.pop();
  return `${wellFormed(cut.join(''))}~${createHash('sha256').update(v, 'utf8').digest('hex').slice(0, 16)}`;
}

/** A vendor code (`tool_error`, `rate_limited`, `completed`, `leaf`): identifier-shaped, else absent. */
export function code(v: unknown): string | undefined {
  return typeof v === 'string' && /^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/.test(v) ? v : undefined;
}

/** A non-negative integer from a number Hermes may send as a float (durations are seconds*1000 floats in places). */
export function nonNegInt(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : undefined;
}

export function int(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? Math.round(v) : undefined;
}
