import type { AepEvent } from '../aep/event.js';
import type { EventSink } from './sink.js';

/**
 * Fans each batch out to every sink, in the order they were added (the OTel
 * mirror goes first: it stamps `traceparent`, which later sinks serialize).
 * A sink that throws is counted and skipped; the others and the hook reply
 * are unaffected.
 */
export class EventBus {
  private readonly sinks: EventSink[] = [];
  private sinkErrors = 0;

  add(sink: EventSink): void {
    this.sinks.push(sink);
  }

  publish(events: readonly AepEvent[]): void {
    if (events.length === 0) return;
    for (const sink of this.sinks) {
      try {
        sink.write(events);
      } catch {
        this.sinkErrors++;
      }
    }
  }

  async flush(): Promise<void> {
    await Promise.allSettled(this.sinks.map((s) => s.flush()));
  }

  async shutdown(): Promise<void> {
    await Promise.allSettled(this.sinks.map((s) => s.shutdown()));
  }

  stats(): Record<string, unknown> {
    const out: Record<string, unknown> = { errors: this.sinkErrors };
    for (const s of this.sinks) out[s.name] = s.stats();
    return out;
  }
}
