import type { AepEvent } from '../aep/event.js';

/**
 * A step between identity and the bus that may add to each event (the OTel
 * span context stage stamps `traceparent`). It returns NEW events and never
 * throws into the hook path; the pipeline freezes what it returns, so every
 * consumer gets the same immutable events, in whatever order they were added.
 */
export interface EventStage {
  process(events: readonly AepEvent[]): readonly AepEvent[];
  /** events the stage could not do its part for (passed on as they came), for /healthz */
  readonly errors?: number;
}
