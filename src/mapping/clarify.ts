import { extraOf, str, type HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import { atLeast, compact, gatedText } from './content.js';
import type { MappedEvent } from './types.js';
import type { AepPayloads, FieldSpec, Resolution } from '../aep/payloads.js';

type AnswerValues = NonNullable<AepPayloads['attention.answered']['answer']['values']>;

/**
 * The `clarify` form overlay: an OBSERVED form card beside the pinned tool
 * events. Everything here derives from the payloads, so it stays pure.
 */
export const CLARIFY_TOOL = 'clarify';
const MAX_CHOICES = 4;
const CARD = 'attention.requested';
const FIELD_ID = '1';

/** Vendor return-contract sentinels at the pinned tag (tools/clarify_tool.py, cli.py, gateway). */
const CLI_TIMEOUT = 'The user did not provide a response within the time limit. Use your best judgement to make the choice and proceed.';
const GATEWAY_TIMEOUT = /^\[user did not respond within \d+(?:\.\d+)?\s?m\]$/;
const CLI_CANCELLED = 'The user cancelled. Use your best judgement to proceed.';
const UNDELIVERABLE = '[clarify prompt could not be delivered]';
/** `hermes -z` has no human: the tool answers itself with this bracketed instruction. */
const ONESHOT = /^\[oneshot mode: no user available\./;

/** The vendor's entry-point normalisation of one choice (`_flatten_choice`). */
export function flattenChoice(c: unknown): string {
  if (c === null || c === undefined) return '';
  if (typeof c === 'string') return c.trim();
  if (Array.isArray(c)) return c.map(flattenChoice).join(' ').trim();
  if (typeof c === 'object') {
    for (const key of ['label', 'description', 'text', 'title']) {
      const v = (c as Record<string, unknown>)[key];
      if (typeof v === 'string' && v.trim()) return v.trim();
    }
    return '';
  }
  return typeof c === 'number' || typeof c === 'boolean' || typeof c === 'bigint' ? String(c).trim() : '';
}

/** The choices the user is shown: flattened, empties dropped, capped; `undefined` = open-ended. */
export function normalizeChoices(raw: unknown): string[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const out: string[] = [];
  for (const c of raw) {
    if (out.length === MAX_CHOICES) break;
    const s = flattenChoice(c);
    if (s.length > 0) out.push(s);
  }
  return out.length > 0 ? out : undefined;
}

/** `pre_tool_call(clarify)` with a non-empty question → the observed form card. */
export function mapClarifyRequest(env: HookEnvelope, policy: CapturePolicy): MappedEvent[] {
  const args = env.tool_input;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return [];
  const a = args as Record<string, unknown>;
  const question = typeof a.question === 'string' ? a.question.trim() : '';
  if (!question) return [];
  const callId = str(extraOf(env).tool_call_id);
  const choices = normalizeChoices(a.choices);
  // At redacted+ the labels are the real (pipeline-redacted) text; below, a
  // structural placeholder: the 1-based id (AEP-0006 [metadata*] exception).
  const label = (text: string, id: string): string => gatedText(policy, CARD, text) ?? id;
  const field: FieldSpec = choices
    ? compact({
        id: FIELD_ID,
        type: 'select' as const,
        label: label(question, FIELD_ID),
        required: true,
        multi: a.multi_select === true ? true : undefined,
        other: true,
        choices: choices.map((c, i) => ({ id: String(i + 1), label: label(c, String(i + 1)) })),
      })
    : { id: FIELD_ID, type: 'string', label: label(question, FIELD_ID), required: true };
  const data = { kind: 'form' as const, prompt: `${policy.agent} asks a question`, fields: [field], respond_via: ['oob' as const] };
  return [compact({ type: CARD, data, subject: callId })];
}

interface ClarifyResult {
  readonly choices: string[] | undefined;
  readonly response: unknown;
}

function parseResult(result: unknown): ClarifyResult | undefined {
  let parsed: unknown = result;
  if (typeof result === 'string') {
    try {
      parsed = JSON.parse(result);
    } catch {
      return undefined;
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const p = parsed as Record<string, unknown>;
  if (!('user_response' in p)) return undefined;
  // bounded like the vendor's own menu: a hostile result cannot make matching quadratic
  const choices = Array.isArray(p.choices_offered) ? p.choices_offered.slice(0, MAX_CHOICES).filter((c): c is string => typeof c === 'string') : undefined;
  return { choices, response: p.user_response };
}

function answerValue(policy: CapturePolicy, text: string, choices: string[] | undefined): string | undefined {
  const idx = choices ? choices.indexOf(text) : -1;
  if (idx >= 0) return String(idx + 1); // a picked choice: structural, legal at metadata
  return atLeast(policy, 'attention.answered', 'redacted') ? gatedText(policy, 'attention.answered', text) : undefined;
}

/**
 * `post_tool_call(clarify)` → the card's lifecycle claim, never fabricating an
 * answer: blocked/error → dismissed; timeout sentinels → timeout; cancel,
 * undeliverable, empty → dismissed; the oneshot self-answer → resolved `auto`
 * (no human was there); anything else is the human's answer. An unparseable
 * ok-result claims nothing (the session sweep closes the card).
 */
export function mapClarifyOutcome(env: HookEnvelope, policy: CapturePolicy, outcome: 'completed' | 'failed' | 'denied'): MappedEvent[] {
  const subject = str(extraOf(env).tool_call_id);
  const resolved = (resolution: Resolution): MappedEvent[] => [compact({ type: 'attention.resolved', data: { resolution }, subject })];
  const answered = (values: AnswerValues): MappedEvent[] => [compact({ type: 'attention.answered', data: { answer: { values }, via: 'oob' }, subject })];
  if (outcome !== 'completed') return resolved('dismissed');
  const parsed = parseResult(extraOf(env).result);
  if (!parsed) return [];
  const { response, choices } = parsed;
  if (Array.isArray(response)) {
    const picked = response.slice(0, MAX_CHOICES + 1).filter((r): r is string => typeof r === 'string');
    if (picked.length === 0) return resolved('dismissed');
    const values = picked.map((r) => answerValue(policy, r, choices)).filter((v): v is string => v !== undefined);
    return answered(values.length ? { [FIELD_ID]: values } : {});
  }
  const text = typeof response === 'string' ? response.trim() : '';
  if (text === CLI_TIMEOUT || GATEWAY_TIMEOUT.test(text)) return [compact({ type: 'attention.timeout', data: {}, subject })];
  if (ONESHOT.test(text)) return resolved('auto');
  if (!text || text === CLI_CANCELLED || text === UNDELIVERABLE) return resolved('dismissed');
  const value = answerValue(policy, text, choices);
  return answered(value === undefined ? {} : { [FIELD_ID]: value });
}
