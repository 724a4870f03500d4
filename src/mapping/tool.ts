import { code, extraOf, nonNegInt, str, type HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import { compact, digestOf, fullOnly, gatedText, gatedValue } from './content.js';
import type { MappedEvent } from './types.js';

/** `{name, call_id}`: the tool identity every tool event carries. */
export function toolRef(env: HookEnvelope): { name: string; call_id?: string } {
  const name = str(env.tool_name) ?? 'unknown';
  return compact({ name, call_id: str(extraOf(env).tool_call_id) });
}

function subjectOf(env: HookEnvelope): string | undefined {
  return str(env.tool_name);
}

/** `pre_tool_call` → `tool.requested` (args digested at metadata, redacted at redacted, verbatim at full). */
export function mapPreToolCall(env: HookEnvelope, policy: CapturePolicy): MappedEvent[] {
  const type = 'tool.requested';
  const args = env.tool_input;
  const isObject = typeof args === 'object' && args !== null && !Array.isArray(args);
  const data = compact({
    tool: toolRef(env),
    args_digest: digestOf(policy, type, args),
    args_redacted: isObject ? gatedValue(policy, type, args) : undefined,
    args: isObject ? fullOnly(policy, type, args) : undefined,
  });
  return [compact({ type, data, subject: subjectOf(env) })];
}

/** Which terminal a `post_tool_call` status selects. */
export type ToolOutcome = 'completed' | 'failed' | 'denied';

export function toolOutcome(env: HookEnvelope): ToolOutcome {
  const x = extraOf(env);
  switch (x.status) {
    case 'ok':
      return 'completed';
    case 'error':
      return 'failed';
    case 'blocked':
      return 'denied';
    default:
      // A payload without the three-state status (older or drifted Hermes):
      // an error field is the only honest failure signal left.
      return str(x.error_type) || str(x.error_message) ? 'failed' : 'completed';
  }
}

/** `post_tool_call` → the three-way split on `status`. */
export function mapPostToolCall(env: HookEnvelope, policy: CapturePolicy): MappedEvent[] {
  const x = extraOf(env);
  const tool = toolRef(env);
  const duration_ms = nonNegInt(x.duration_ms);
  const subject = subjectOf(env);
  switch (toolOutcome(env)) {
    case 'completed': {
      const type = 'tool.completed';
      const result = x.result;
      const resultOk = typeof result === 'string' || (typeof result === 'object' && result !== null && !Array.isArray(result));
      const data = compact({
        tool,
        duration_ms,
        result_digest: digestOf(policy, type, result),
        result_redacted: !resultOk ? undefined : typeof result === 'string' ? gatedText(policy, type, result) : gatedValue(policy, type, result),
        result: resultOk ? fullOnly(policy, type, result) : undefined,
      });
      return [compact({ type, data, subject })];
    }
    case 'failed': {
      const type = 'tool.failed';
      const error = compact({
        type: code(x.error_type) ?? 'tool_error',
        message: gatedText(policy, type, x.error_message),
      });
      return [compact({ type, data: compact({ tool, duration_ms, error }), subject })];
    }
    case 'denied': {
      const type = 'tool.denied';
      // A Hermes block comes from a blocking policy hook: `by: "policy"`; the
      // block message is free text, so it rides as `rule` only at redacted+.
      const data = compact({ tool, duration_ms, by: 'policy' as const, rule: gatedText(policy, type, x.error_message) });
      return [compact({ type, data, subject })];
    }
  }
}
