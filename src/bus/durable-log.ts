import type { AepEvent } from '../aep/event.js';
import type { Reporting } from './consumer.js';

/** What became of one `write` on a durable log, when the hook is answered. */
export interface WriteOutcome {
  /** events handed to the operating system */
  readonly written: number;
  /**
   * events whose write failed, held in memory (bounded) to be written first
   * when the log takes writes again: the hook was processed, so it is answered
   */
  readonly retained: number;
  /** events given up (counted by the log) */
  readonly lost: number;
  /** why some were not written: a code, never content */
  readonly reason?: string;
  /** when `retained` > 0: settles once those are finally written or given up */
  readonly final?: Promise<{ readonly written: number; readonly lost: number }>;
}

/** How one hook's events are to be written. */
export interface WriteOptions {
  /**
   * The spool key the hook's transport will spool it under if it is answered
   * 503 (`x-hermes-aep-spool-key`). Events whose write fails are then held
   * and, once finally written, carry it as `hermesspool`, so the spool
   * re-delivery is recognised as already written. Without one, events whose
   * write fails are given up at once (counted): nothing can tell their
   * re-delivery from a new hook, so holding them would write it twice.
   */
  readonly spoolKey?: string;
  /** hold events whose write failed even without a key (the daemon's own events, spooled hooks): the default */
  readonly hold?: boolean;
}

/**
 * The durable log (the JSONL history): it holds the hook reply. `write`
 * returns a promise that settles once the events reached the operating
 * system (or were lost and counted), and never throws into the hook path.
 */
export interface DurableLog extends Reporting {
  readonly name: string;
  write(events: readonly AepEvent[], opts?: WriteOptions): Promise<WriteOutcome>;
  /**
   * Why a new hook cannot be taken now (queue full, the disk failing), or
   * undefined. A refused hook is not processed at all. `session`: the hook's
   * session, refused alone when only its own file fails.
   */
  refusal?(session?: string): string | undefined;
  /** Whether this one session alone is refused now (its own file fails) while others are taken; not counted as a refusal. */
  refusesSession?(session: string): boolean;
  /** Resolve once everything accepted so far is durable (or dropped and counted). */
  flush(): Promise<void>;
  /** Flush and release resources; safe to call twice. */
  shutdown(): Promise<void>;
}
