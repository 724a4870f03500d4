import type { UnitKind } from '../aep/lifecycle.js';
import { RecencyMap } from '../util/recency-map.js';
import { runSpanId, traceIdFor } from './ids.js';
import { MAX_REMEMBERED } from './memory-bounds.js';
import type { TraceSampler } from './sampler.js';

/** A span's identity, as other spans link to it and AEP events point at it. */
export interface SpanCtx {
  readonly traceId: string;
  readonly spanId: string;
  readonly sampled: boolean;
  readonly kind: SpanKindOf;
}

/** A unit's span, or a model call's `chat` span (complete when its event arrives: no unit). */
export type SpanKindOf = UnitKind | 'chat';

/**
 * Span contexts with the sampler's decision, taken once per trace id (so
 * every span of a turn shares it, and a restore decides as the first run did).
 */
export class SpanContexts {
  private readonly sampledByTrace = new RecencyMap<string, boolean>(MAX_REMEMBERED);

  constructor(private readonly sampler: TraceSampler) {}

  sampled(traceId: string): boolean {
    let s = this.sampledByTrace.get(traceId);
    if (s === undefined) {
      s = this.sampler(traceId);
      this.sampledByTrace.set(traceId, s);
    }
    return s;
  }

  of(traceId: string, spanId: string, kind: SpanKindOf): SpanCtx {
    return { traceId, spanId, sampled: this.sampled(traceId), kind };
  }

  /** A run's root span (ids derived from session and run: the same turn is always the same trace). */
  run(session: string, run: string): SpanCtx {
    return this.of(traceIdFor(session, run), runSpanId(session, run), 'run');
  }
}
