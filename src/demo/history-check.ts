/**
 * What the daemon wrote for the demo session: its JSONL history file (the
 * path the daemon names it by), read until every expected event type is in
 * it, in order, or the deadline passes.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeObject, historyDirOf, safeFileName } from '../history/index.js';

/**
 * The AEP types the scripted session must produce, in this order (other
 * events may come between them): the session opens, the turn runs (model
 * calls with tokens, four tool calls, the second failing, Hermes's approval
 * prompt asked and answered before its command runs, the clarify question
 * asked, and answered as the tool returns), the turn finishes and the
 * finalize ends the session.
 */
export const EXPECTED_TYPES: readonly string[] = [
  'session.started',
  'run.started',
  'x.hermes.model.call',
  'tool.requested',
  'tool.completed',
  'tool.requested',
  'tool.failed',
  'x.hermes.model.call',
  'tool.requested',
  'attention.requested',
  'attention.answered',
  'attention.resolved',
  'tool.completed',
  'x.hermes.model.call',
  'tool.requested',
  'attention.requested',
  'tool.completed',
  'attention.answered',
  'attention.resolved',
  'x.hermes.model.call',
  'run.finished',
  'session.ended',
];

export interface SessionEvent {
  readonly event: Readonly<Record<string, unknown>>;
  /** the line as written */
  readonly line: string;
}

export function historyFileOf(historyRoot: string, session: string): string {
  return path.join(historyDirOf(historyRoot), `${safeFileName(session)}.jsonl`);
}

/** The session's events in the file (none when it does not exist yet); a line of another session, or torn, is skipped. */
export function readSessionEvents(file: string, session: string): SessionEvent[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: SessionEvent[] = [];
  for (const line of text.split('\n')) {
    const event = line === '' ? undefined : decodeObject(line);
    if (event !== undefined && event['session'] === session) out.push({ event, line });
  }
  return out;
}

/** The expected types not found in order (the first one missing and all after it); empty when all are there. */
export function missingTypes(events: readonly SessionEvent[], expected: readonly string[] = EXPECTED_TYPES): string[] {
  let at = 0;
  for (const { event } of events) if (at < expected.length && event['type'] === expected[at]) at += 1;
  return expected.slice(at);
}

/** Poll the file until every expected type is in it or `deadlineMs` passes; what it held last. */
export async function awaitSession(
  file: string,
  session: string,
  deadlineMs: number,
  expected: readonly string[] = EXPECTED_TYPES,
): Promise<{ events: SessionEvent[]; missing: string[] }> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const events = readSessionEvents(file, session);
    const missing = missingTypes(events, expected);
    if (missing.length === 0 || Date.now() >= end) return { events, missing };
    await new Promise((r) => setTimeout(r, 100));
  }
}
