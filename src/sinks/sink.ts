import type { AepEvent } from '../aep/event.js';

/** A consumer of the event stream. `write` never blocks and never throws into the hook path. */
export interface EventSink {
  readonly name: string;
  /** Accept events; queue them; return at once. */
  write(events: readonly AepEvent[]): void;
  /** Resolve once everything accepted so far is durable (or dropped and counted). */
  flush(): Promise<void>;
  /** Flush and release resources; safe to call twice. */
  shutdown(): Promise<void>;
  /** Counters for `/healthz`. */
  stats(): Record<string, number | boolean | string>;
}
