import type { Signal } from '../otel-env.js';

/** The signals whose failed export requests `aep.export.failures` counts. */
export type { Signal };

/**
 * What the observable instruments read at each collection, from counters the
 * daemon already keeps for /healthz (nothing is counted twice). Every key is
 * a name from code: a sink, a reason, a hook name bounded by the pipeline.
 */
export interface DaemonReadings {
  /** hooks received, by Hermes hook name (src/daemon/hook-counts.ts) */
  hooks?(): Readonly<Record<string, number>>;
  /** items waiting, by sink */
  queues?(): Readonly<Record<string, number | undefined>>;
  /** items given up, by sink, then reason */
  drops?(): Readonly<Record<string, Readonly<Record<string, number | undefined>> | undefined>>;
}

/**
 * Failed export requests per signal: each exporter registers a reader of its
 * own count (the traces mirror, the metrics sink; the log bridge adds `logs`
 * the same way). Read at collection only.
 */
export class ExportFailures {
  private readonly readers = new Map<Signal, () => number>();

  register(signal: Signal, read: () => number): void {
    this.readers.set(signal, read);
  }

  read(): [Signal, number][] {
    return [...this.readers].map(([s, r]) => [s, r()]);
  }
}
