/**
 * What one received frame means for a pending command (AEP-0004 §3, §4.2,
 * §6): its acknowledgement (`control.accepted` / `control.rejected` whose
 * `cause` is the command id), a router's refusal (a connection-scoped
 * `error` frame whose `cause` is the command id), or, for an answer, the
 * card's outcome (`attention.answered` / `.resolved` / `.timeout` whose
 * `subject` is the card id). Anything else is unrelated and ignored: other
 * sessions' traffic, other commands' acks, the command itself echoed back.
 * The lines printed for them quote only codes and the daemon's own details,
 * never event content, except the operator's own answer text.
 */
import { clean } from '../tail/facts.js';

export type Ack =
  | { readonly kind: 'accepted'; readonly line: string }
  | { readonly kind: 'rejected'; readonly reason: string; readonly detail?: string; readonly line: string }
  | { readonly kind: 'refused'; readonly code: string; readonly detail?: string; readonly line: string };

export type Outcome =
  | { readonly kind: 'answered'; readonly option?: string; readonly text?: string; readonly line: string }
  | { readonly kind: 'timeout'; readonly afterMs?: number; readonly line: string }
  | { readonly kind: 'resolved'; readonly resolution: string; readonly line: string };

export type Verdict = { readonly ack: Ack } | { readonly outcome: Outcome } | undefined;

export interface Pending {
  readonly commandId: string;
  /** the card an answer addresses: its outcome events carry it as `subject` */
  readonly card?: string;
}

type Obj = Readonly<Record<string, unknown>>;
const rec = (v: unknown): Obj | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Classify one text frame (`line`, as received) against the pending command. */
export function classify(line: string, p: Pending): Verdict {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  const f = rec(parsed);
  const type = str(f?.['type']);
  if (f === undefined || type === undefined) return undefined;
  if (type === 'error') {
    if (f['cause'] !== p.commandId) return undefined;
    const detail = str(f['detail']);
    return { ack: { kind: 'refused', code: str(f['code']) ?? 'error', ...(detail !== undefined ? { detail } : {}), line } };
  }
  if (!type.includes('.') || f['id'] === p.commandId) return undefined;
  const data = rec(f['data']) ?? {};
  if ((type === 'control.accepted' || type === 'control.rejected') && f['cause'] === p.commandId) {
    if (type === 'control.accepted') return { ack: { kind: 'accepted', line } };
    const detail = str(data['detail']);
    return { ack: { kind: 'rejected', reason: str(data['reason']) ?? 'unspecified', ...(detail !== undefined ? { detail } : {}), line } };
  }
  if (p.card === undefined || f['subject'] !== p.card) return undefined;
  switch (type) {
    case 'attention.answered': {
      const answer = rec(data['answer']) ?? {};
      const option = str(answer['option']);
      const text = str(answer['text']);
      return { outcome: { kind: 'answered', ...(option !== undefined ? { option } : {}), ...(text !== undefined ? { text } : {}), line } };
    }
    case 'attention.timeout': {
      const after = data['after_ms'];
      return { outcome: { kind: 'timeout', ...(typeof after === 'number' && Number.isFinite(after) ? { afterMs: after } : {}), line } };
    }
    case 'attention.resolved':
      return { outcome: { kind: 'resolved', resolution: str(data['resolution']) ?? 'unspecified', line } };
    default:
      return undefined;
  }
}

const paren = (detail: string | undefined) => (detail !== undefined ? ` (${clean(detail, 200)})` : '');

/** `accepted`, `rejected: <reason>[ (<detail>)]`, `refused: <code> (<detail>)` */
export function ackText(a: Ack): string {
  switch (a.kind) {
    case 'accepted':
      return 'accepted';
    case 'rejected':
      return `rejected: ${clean(a.reason, 40)}${paren(a.detail)}`;
    case 'refused':
      return `refused: ${clean(a.code, 40)}${paren(a.detail)}`;
  }
}

/** `answered: deny "reason"`, `timed out after 300s`, `dismissed`, `resolved: auto` */
export function outcomeText(o: Outcome): string {
  switch (o.kind) {
    case 'answered':
      return `answered: ${clean(o.option ?? '(text)', 40)}${o.text !== undefined ? ` ${JSON.stringify(clean(o.text, 200))}` : ''}`;
    case 'timeout':
      return o.afterMs !== undefined ? `timed out after ${Math.round(o.afterMs / 1000)}s` : 'timed out';
    case 'resolved':
      return o.resolution === 'dismissed' ? 'dismissed' : `resolved: ${clean(o.resolution, 40)}`;
  }
}
