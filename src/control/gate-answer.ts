import type { GateOption } from './gate-card.js';

/** A deny reason (and any answer text) longer than this is refused `invalid`: it would be the model-visible block message. */
export const MAX_ANSWER_TEXT = 4_000;

/** What an answer to a gate card decides: the option, and the text that rode with it (a deny's stated reason). */
export interface GateDecision {
  readonly option: GateOption;
  readonly text?: string;
}

export type GateAnswerReading = { readonly ok: true; readonly decision: GateDecision } | { readonly ok: false; readonly detail: string };

const isOption = (s: string): s is GateOption => s === 'allow' || s === 'deny';

/**
 * `control.attention.respond` data against the gate card (AEP-0008 §1, the
 * receiver rule for `kind: "permission"`): an option id is that option; a
 * text answer that IS an option word (trimmed, case-insensitive) is that
 * option with no text residue; any other text refuses (deny, the text its
 * stated reason), since unmatched text never grants; an empty answer,
 * `values`, or a foreign option is invalid. Details are fixed phrases: the
 * sender's values are never quoted.
 */
export function readGateAnswer(data: unknown): GateAnswerReading {
  const answer = typeof data === 'object' && data !== null ? (data as Record<string, unknown>)['answer'] : undefined;
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return invalid('data.answer must be an object');
  const a = answer as Record<string, unknown>;
  if (a['values'] !== undefined) return invalid('a permission card is answered with an option or text, not values');
  const text = a['text'];
  if (text !== undefined && typeof text !== 'string') return invalid('answer.text must be a string');
  if (typeof text === 'string' && text.length > MAX_ANSWER_TEXT) return invalid(`answer.text is longer than ${MAX_ANSWER_TEXT} characters`);
  const option = a['option'];
  if (option !== undefined) {
    if (typeof option !== 'string' || !isOption(option)) return invalid('answer.option is not one of the card options (allow, deny)');
    return { ok: true, decision: text !== undefined && text.trim() !== '' ? { option, text } : { option } };
  }
  if (text === undefined || text.trim() === '') return invalid('the answer is empty: give an option or text');
  const word = text.trim().toLowerCase();
  if (isOption(word)) return { ok: true, decision: { option: word } };
  return { ok: true, decision: { option: 'deny', text } };
}

const invalid = (detail: string): GateAnswerReading => ({ ok: false, detail });
