import type { AepEvent } from '../aep/event.js';
import type { Degradation } from '../core/health-latch.js';

/**
 * A consumer of this daemon's own events, downstream of identity. After-durable
 * consumers (spans, metrics, logs, snapshot, stream hub, relay) get each hook's
 * events once the history holds them, as frozen objects, in publication order.
 * `consume` never waits and never throws into the hook path (a throw is counted
 * by the bus and skipped).
 */
export interface Consumer {
  readonly name: string;
  consume(events: readonly AepEvent[]): void;
  /**
   * Optional: events the durable logs gave up, never to be consumed. Only for a
   * consumer that prepared something for them at stamp time (the span mirror), to count it dropped.
   */
  unwritten?(events: readonly AepEvent[]): void;
  /** Resolve once everything consumed so far is done with (exported, or dropped and counted). */
  flush(): Promise<void>;
  /** Flush and release resources; safe to call twice. */
  shutdown(): Promise<void>;
}

/** What a consumer or a durable log reports to `/healthz`: kept apart from the work itself. */
export interface Reporting {
  /** Counters for `/healthz` (`sinks.<name>`). */
  stats?(): Record<string, number | boolean | string>;
  /** Set while it cannot do its job: `/healthz` turns `degraded`. */
  health?(): Degradation | undefined;
}
