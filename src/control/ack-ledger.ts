import { LRUCache } from 'lru-cache';
import { isControlAck } from '../aep/lifecycle.js';
import { isCommandType } from '../stream/socket/frames.js';
import { dedupeKey, type WireEvent } from '../aep/wire.js';

/** Commands whose dedupe state (and recorded ack) is remembered: the least recently seen are forgotten first. */
export const MAX_REMEMBERED_COMMANDS = 10_000;

/** A command's dedupe state: its one decision is still being made, or made and recorded (the ack itself). */
export type LedgerEntry = { readonly state: 'pending' } | { readonly state: 'acked'; readonly ack: WireEvent };

/**
 * One ack decision per command (AEP-0004 §2.3, §3): commands are deduped on
 * `(source, id)`, and the recorded ack is kept exactly as long as that state,
 * so a redelivery re-emits the same ack (same id, same position, same bytes).
 * Rebuilt at start from the history the replay buffer was refilled with:
 * each own session's commands are persisted there, their acks after them.
 */
export class AckLedger {
  private readonly entries = new LRUCache<string, LedgerEntry>({ max: MAX_REMEMBERED_COMMANDS });
  /** restore only: the dedupe key of each command seen, by session and command id */
  private readonly restoring = new LRUCache<string, string>({ max: MAX_REMEMBERED_COMMANDS });

  lookup(command: Pick<WireEvent, 'source' | 'id'>): LedgerEntry | undefined {
    return this.entries.get(dedupeKey(command));
  }

  /** a decision is being made: a duplicate arriving meanwhile needs no ack of its own */
  begin(command: Pick<WireEvent, 'source' | 'id'>): void {
    this.entries.set(dedupeKey(command), { state: 'pending' });
  }

  record(command: Pick<WireEvent, 'source' | 'id'>, ack: WireEvent): void {
    this.entries.set(dedupeKey(command), { state: 'acked', ack });
  }

  /** no decision was made (the history refused it): a redelivery is a new command */
  forget(command: Pick<WireEvent, 'source' | 'id'>): void {
    this.entries.delete(dedupeKey(command));
  }

  /** One own event read back from the history at start, in its session's order: a command, or the ack that answered one. */
  restore(w: WireEvent): void {
    if (w.session === undefined) return;
    if (isCommandType(w.type)) {
      this.restoring.set(`${w.session}\u0000${w.id}`, dedupeKey(w));
      return;
    }
    if (!isControlAck(w.type)) return;
    const cause = w.event['cause'];
    const key = typeof cause === 'string' ? this.restoring.get(`${w.session}\u0000${cause}`) : undefined;
    if (key !== undefined) this.entries.set(key, { state: 'acked', ack: w });
  }

  get size(): number {
    return this.entries.size;
  }
}
