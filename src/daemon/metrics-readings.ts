import type { DaemonReadings, OtelMirror } from '../otel/index.js';
import type { JsonlHistorySink } from '../history/index.js';
import type { DropReports } from '../transport/drop-report.js';
import type { RelayLink } from '../relay/relay-link.js';
import type { HookPipeline } from './pipeline.js';
import type { SpoolIngest } from './spool-ingest.js';
import type { StreamWiring } from './stream-wiring.js';

const n = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** The hub's silent drops: slow consumers, and other emitters' sequenced events kept out of an own session's lane. */
const streamDrops = (s: Record<string, number>) => ({
  slow_consumer: n(s['dropped_slow']),
  own_lane: (n(s['own_lane_refused']) ?? 0) + (n(s['own_lane_evicted']) ?? 0),
});

/**
 * What the metrics' observable instruments read: the queue depths and drop
 * counters /healthz already shows, by sink and reason (names from code, never
 * data), and the hooks per name. Read at each collection, never per hook.
 */
export function daemonReadings(p: {
  readonly history: JsonlHistorySink;
  readonly mirror?: OtelMirror | undefined;
  readonly spool: () => SpoolIngest | undefined;
  readonly dropReports: DropReports;
  readonly stream?: StreamWiring | undefined;
  readonly relay?: RelayLink | undefined;
  readonly pipeline: HookPipeline;
}): DaemonReadings {
  return {
    hooks: () => p.pipeline.byHook.snapshot(),
    queues: () => ({ log: n(p.history.stats().queued), ...(p.mirror ? { otel: n(p.mirror.stats().spans_queued) } : {}) }),
    drops: () => {
      const otel = p.mirror?.stats();
      const relay = p.relay?.stats();
      return {
        log: { dropped: n(p.history.stats().dropped) },
        ...(otel ? { otel: { export_failed: n(otel.spans_failed), queue_full: n(otel.spans_dropped_queue_full) } } : {}),
        spool: { dropped: n(p.spool()?.stats().dropped) },
        plugin: { dropped: p.dropReports.stats().dropped },
        ...(p.stream ? { stream: streamDrops(p.stream.hub.stats()) } : {}),
        ...(relay ? { relay: { low: relay.dropped_low, notice: relay.dropped_notice } } : {}),
      };
    },
  };
}
