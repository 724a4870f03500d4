import { code, extraOf, int, nonNegInt, type HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import { compact, gatedText } from './content.js';
import type { MappedEvent } from './types.js';
import { X_HERMES } from '../aep/lifecycle.js';

/** `api_request_error` → the error FACT, vendor-namespaced; the message is redacted-gated. */
export function mapApiRequestError(env: HookEnvelope, policy: CapturePolicy): MappedEvent[] {
  const x = extraOf(env);
  const err = typeof x.error === 'object' && x.error !== null ? (x.error as Record<string, unknown>) : {};
  const data = compact({
    status_code: int(x.status_code),
    retry_count: nonNegInt(x.retry_count),
    reason: code(x.reason),
    error_message: gatedText(policy, X_HERMES.apiError, err.message),
  });
  return [{ type: X_HERMES.apiError, data }];
}
