/**
 * The cards `tail` keeps track of: `attention.requested` events that can be
 * answered from here (`respond_via` lists `control`, AEP-0008), from the
 * moment their line is printed until their outcome arrives
 * (`attention.answered`, `.resolved` or `.timeout` naming the card as
 * `subject`, AEP-0002 §7.1). A card line carries the full card id (what
 * `hermes-aep answer` takes) and the time left until `expires_at`, computed
 * when the line is rendered; the first outcome line says how the card
 * ended. A card whose `expires_at` passed with no outcome shows as expired,
 * and is forgotten a while later (its daemon may be gone).
 */
import type { Styler } from './color.js';
import { clean } from './facts.js';

type Ev = Readonly<Record<string, unknown>>;
const rec = (v: unknown): Ev | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Ev) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** How long an expired card stays listed without an outcome. */
export const EXPIRED_GRACE_MS = 60_000;

export interface PendingCard {
  readonly id: string;
  /** `expires_at` in ms since the epoch; absent when the card declares none (or an unreadable one) */
  readonly expiresAt?: number;
}

/** What a printed event adds to its line: a card's id and time left, or how a tracked card ended. */
export type CardNote = { readonly kind: 'card'; readonly card: PendingCard } | { readonly kind: 'ended'; readonly how: string };

/** The card an event raises, when it is one answerable from here. */
export function answerableCard(ev: Ev): PendingCard | undefined {
  if (ev['type'] !== 'attention.requested') return undefined;
  const id = str(ev['id']);
  const data = rec(ev['data']);
  const via = data?.['respond_via'];
  if (id === undefined || !Array.isArray(via) || !via.includes('control')) return undefined;
  const at = typeof data?.['expires_at'] === 'string' ? Date.parse(data['expires_at']) : NaN;
  return { id, ...(Number.isFinite(at) ? { expiresAt: at } : {}) };
}

/** `42s left` (rounded up: a card never says 0s left while it is still open), `expired`, or nothing without an expiry. */
export function timeLeft(card: PendingCard, now: number): string | undefined {
  if (card.expiresAt === undefined) return undefined;
  const ms = card.expiresAt - now;
  return ms > 0 ? `${Math.ceil(ms / 1000)}s left` : 'expired';
}

/** How an outcome event ended its card. */
function endedBy(ev: Ev): string | undefined {
  const data = rec(ev['data']) ?? {};
  switch (ev['type']) {
    case 'attention.answered': {
      const option = str(rec(data['answer'])?.['option']);
      return option !== undefined ? `answered: ${clean(option, 24)}` : 'answered';
    }
    case 'attention.timeout':
      return 'timed out';
    case 'attention.resolved': {
      const r = str(data['resolution']);
      return r === undefined || r === 'answered' ? 'answered' : r === 'dismissed' ? 'dismissed' : `resolved: ${clean(r, 24)}`;
    }
    default:
      return undefined;
  }
}

export class PendingCards {
  private readonly cards = new Map<string, PendingCard>();

  constructor(private readonly graceMs = EXPIRED_GRACE_MS) {}

  /** Take note of one printed event; what its line should add. */
  observe(ev: Ev, now: number): CardNote | undefined {
    const card = answerableCard(ev);
    if (card !== undefined) {
      if (!this.stale(card, now)) this.cards.set(card.id, card);
      return { kind: 'card', card };
    }
    const subject = str(ev['subject']);
    if (subject === undefined || !this.cards.has(subject)) return undefined;
    const how = endedBy(ev);
    if (how === undefined) return undefined;
    this.cards.delete(subject);
    return { kind: 'ended', how };
  }

  /** The cards still waiting, oldest first (expired ones past the grace forgotten). */
  pending(now: number): PendingCard[] {
    for (const [id, c] of this.cards) if (this.stale(c, now)) this.cards.delete(id);
    return [...this.cards.values()];
  }

  private stale(c: PendingCard, now: number): boolean {
    return c.expiresAt !== undefined && now - c.expiresAt > this.graceMs;
  }
}

/** The parts a note adds to an event line. */
export function noteParts(note: CardNote, now: number, style: Styler): string[] {
  if (note.kind === 'ended') return [style('attention', `→ ${note.how}`)];
  const left = timeLeft(note.card, now);
  return [style('attention', `card=${clean(note.card.id, 80)}`), ...(left === undefined ? [] : [style(left === 'expired' ? 'failure' : 'warning', left)])];
}
