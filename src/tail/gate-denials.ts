/**
 * Which `tool.denied` events are the operator's: a deny answered on the
 * control gate's card. The event itself says `by: "policy"` (the AEP schema
 * knows no operator), so `tail` reads the chain the history keeps: the gate
 * card (`attention.requested` answerable over `control`, kind `permission`)
 * has `cause` = the call's `tool.requested`; its `attention.answered`
 * (`subject` = the card) chose `deny`; Hermes's report of the blocked call,
 * `tool.denied`, has `cause` = the same `tool.requested`. A block by any other
 * policy has no such card and keeps its wording. The reason shown is the
 * operator's answer text, only when that answer event's capture level admits
 * free text (`redacted` or `full`).
 */
import { captureRank, DEFAULT_CAPTURE, isCaptureLevel } from '../core/capture-levels.js';
import { answerableCard } from './cards.js';
import type { GateDenial } from './facts.js';

type Ev = Readonly<Record<string, unknown>>;
const rec = (v: unknown): Ev | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Ev) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export type { GateDenial };

/** Cards and denials remembered (oldest forgotten first): a terminal follows its card within one call. */
const MAX_TRACKED = 10_000;

function setBounded<V>(m: Map<string, V>, k: string, v: V): void {
  m.delete(k);
  m.set(k, v);
  if (m.size > MAX_TRACKED) m.delete(m.keys().next().value!);
}

export class GateDenials {
  /** gate card id → the id of the `tool.requested` it holds */
  private readonly cards = new Map<string, string>();
  /** `tool.requested` id → the operator's deny of it */
  private readonly denied = new Map<string, GateDenial>();

  /** Take note of one event; for a `tool.denied` that the operator's gate decided, the denial. */
  observe(ev: Ev): GateDenial | undefined {
    const type = ev['type'];
    const cause = str(ev['cause']);
    if (type === 'attention.requested') {
      if (cause !== undefined && answerableCard(ev) !== undefined && rec(ev['data'])?.['kind'] === 'permission')
        setBounded(this.cards, String(ev['id']), cause);
      return undefined;
    }
    if (type === 'attention.answered') {
      const subject = str(ev['subject']);
      const held = subject !== undefined ? this.cards.get(subject) : undefined;
      const answer = rec(rec(ev['data'])?.['answer']);
      if (held === undefined || answer?.['option'] !== 'deny') return undefined;
      const level = isCaptureLevel(ev['capture']) ? ev['capture'] : DEFAULT_CAPTURE;
      const reason = captureRank(level) >= captureRank('redacted') ? str(answer['text']) : undefined;
      setBounded(this.denied, held, reason !== undefined ? { reason } : {});
      return undefined;
    }
    if (type === 'tool.denied' && cause !== undefined) {
      const d = this.denied.get(cause);
      if (d !== undefined) this.denied.delete(cause);
      return d;
    }
    return undefined;
  }
}
