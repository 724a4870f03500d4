/**
 * The argument rules of `answer` and `instruct`, checked before anything is
 * sent: strict, so a slip of the keyboard never becomes a decision. A
 * violation is a `UsageError` (exit 2); its message never repeats what was
 * typed beyond the word that is wrong.
 */
import type { Answer } from './command-event.js';

/** A command line the CLI will not act on: exit 2. */
export class UsageError extends Error {}

/** Longest operator text one command carries (a deny reason, an instruction). */
export const MAX_TEXT = 16 * 1024;

export interface AnswerArgs {
  readonly card: string;
  readonly answer: Answer;
}

/** one word: no blank, no control character (a card id is copied from a card line) */
// eslint-disable-next-line no-control-regex
const printable = (s: string) => s !== '' && !/[\u0000-\u0020\u007f-\u009f]/.test(s);

function text(words: readonly string[], what: string): string | undefined {
  const t = words.join(' ').trim();
  if (t === '') return undefined;
  if (Buffer.byteLength(t) > MAX_TEXT) throw new UsageError(`${what} is longer than ${MAX_TEXT} bytes`);
  return t;
}

/** `answer <card-id> allow|deny [reason…]`: the reason rides only with deny. */
export function answerArgs(card: string, decision: string | undefined, reason: readonly string[]): AnswerArgs {
  if (!printable(card)) throw new UsageError('the card id is one word (copy it from the card line of `hermes-aep tail`)');
  if (decision !== 'allow' && decision !== 'deny') throw new UsageError('the second word must be allow or deny');
  const why = text(reason, 'the reason');
  if (decision === 'allow' && why !== undefined) throw new UsageError('a reason goes only with deny (allow takes none)');
  return { card, answer: { option: decision, ...(why !== undefined ? { text: why } : {}) } };
}

/** `instruct <session> <text…>`: the words joined by spaces, not empty. */
export function instructArgs(session: string, words: readonly string[]): { readonly session: string; readonly text: string } {
  if (session === '') throw new UsageError('the session id must not be empty');
  const t = text(words, 'the instruction');
  if (t === undefined) throw new UsageError('the instruction text must not be empty');
  return { session, text: t };
}
