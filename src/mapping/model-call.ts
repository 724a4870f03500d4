import { code, extraOf, nonNegInt, str, type HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import type { ModelCallPayload, ModelOutput, ModelToolCall } from '../aep/payloads.js';
import { X_HERMES } from '../aep/lifecycle.js';
import { fromHermesUsage } from '../usage/token-usage.js';
import { redactText, redactValue } from '../capture/redact.js';
import { safeIdentifier } from '../capture/identifier-secrets.js';
import { levelFor } from '../capture/policy.js';
import { compact } from './content.js';
import { identifier as ident } from './extensions.js';
import type { MappedEvent } from './types.js';

/** Hermes's epoch seconds (`time.time()`) as an RFC 3339 time, millisecond precision; absent when not a plausible time. */
function isoOf(seconds: unknown): string | undefined {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0 || seconds > 1e11) return undefined;
  return new Date(Math.round(seconds * 1000)).toISOString();
}

/** The model server's host and port from `base_url` (never its path, query or credentials). */
function serverOf(baseUrl: unknown): { server_address?: string; server_port?: number } {
  if (typeof baseUrl !== 'string') return {};
  try {
    const u = new URL(baseUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return {};
    const port = u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
    return compact({ server_address: ident(u.hostname), server_port: port });
  } catch {
    return {};
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A tool call's arguments: the JSON object they encode when they parse, else the raw string. */
function argumentsOf(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/**
 * The assistant's output from the SANITIZED response Hermes hands its hooks
 * (`extra.response.assistant_message`). `extra.assistant_message` is the
 * provider's raw object, which the shell transport stringifies with `str()`:
 * it is never read.
 */
function outputOf(x: Record<string, unknown>): ModelOutput | undefined {
  const msg = isRecord(x.response) && isRecord(x.response.assistant_message) ? x.response.assistant_message : undefined;
  if (!msg) return undefined;
  const content = typeof msg.content === 'string' && msg.content.length > 0 ? msg.content : undefined;
  const calls: ModelToolCall[] = (Array.isArray(msg.tool_calls) ? msg.tool_calls : []).filter(isRecord).map((c) => {
    // Hermes's own ToolCall flattened (`name`, `arguments`); a provider's raw object nests them under `function`
    const fn = isRecord(c.function) ? c.function : {};
    return compact({ id: str(c.id), name: str(c.name ?? fn.name), arguments: argumentsOf(c.arguments ?? fn.arguments) });
  });
  if (content === undefined && calls.length === 0) return undefined;
  return compact({ content, tool_calls: calls.length > 0 ? calls : undefined });
}

/** The output at the event's level: redacted at `redacted`, verbatim at `full`, absent below. */
function gatedOutput(policy: CapturePolicy, x: Record<string, unknown>): { output_redacted?: ModelOutput; output?: ModelOutput } {
  const level = levelFor(policy, X_HERMES.modelCall);
  if (level !== 'redacted' && level !== 'full') return {};
  const out = outputOf(x);
  if (!out) return {};
  if (level === 'full') return { output: out };
  const redacted = compact({
    content: out.content !== undefined ? redactText(out.content, policy.redact) : undefined,
    // a call's id and name are identifiers: through secret detection like the envelope's (safe-identifiers.ts)
    tool_calls: out.tool_calls?.map((c) =>
      compact({
        id: c.id !== undefined ? safeIdentifier(c.id, policy.redact) : undefined,
        name: c.name !== undefined ? safeIdentifier(c.name, policy.redact) : undefined,
        arguments: c.arguments !== undefined ? redactValue(c.arguments, policy.redact) : undefined,
      }),
    ),
  });
  return { output_redacted: redacted };
}

/** What every finished model call carries, from the payload Hermes hands its model-call hooks (main loop or auxiliary). */
export function modelCallData(x: Record<string, unknown>, policy: CapturePolicy): ModelCallPayload {
  const startedS = typeof x.started_at === 'number' ? x.started_at : undefined;
  const endedS = typeof x.ended_at === 'number' ? x.ended_at : undefined;
  const seconds = typeof x.api_duration === 'number' ? x.api_duration : startedS !== undefined && endedS !== undefined ? endedS - startedS : undefined;
  return compact({
    model: ident(x.model),
    response_model: ident(x.response_model),
    provider: ident(x.provider),
    api_mode: code(x.api_mode),
    ...serverOf(x.base_url),
    api_request_id: str(x.api_request_id),
    api_call: nonNegInt(x.api_call_count),
    started_at: isoOf(startedS),
    ended_at: isoOf(endedS),
    duration_ms: seconds !== undefined ? nonNegInt(seconds * 1000) : undefined,
    finish_reason: code(x.finish_reason),
    message_count: nonNegInt(x.message_count),
    ...fromHermesUsage(x.usage),
    assistant_content_chars: nonNegInt(x.assistant_content_chars),
    assistant_tool_call_count: nonNegInt(x.assistant_tool_call_count),
    ...gatedOutput(policy, x),
  });
}

/**
 * `post_api_request` → `x.hermes.model.call`: one finished model call with
 * the facts no other hook binds (model, provider, index in the turn, real
 * start and end, finish reason, token usage with the GenAI names). The
 * assistant's text and tool-call arguments only at `redacted`/`full`. Its
 * cost is added by the daemon's pricing step (src/usage/), not here.
 */
export function mapPostApiRequest(env: HookEnvelope, policy: CapturePolicy): MappedEvent[] {
  return [{ type: X_HERMES.modelCall, data: modelCallData(extraOf(env), policy) }];
}
