import type { AepEvent } from '../aep/event.js';
import type { IdentityStage } from '../identity/identity-stage.js';
import type { ReplayCounts } from '../history/index.js';
import type { Logger } from '../core/logger.js';
import type { OtelMirror } from '../otel/index.js';

export interface SnapshotOptions {
  readonly stateDir: string;
  readonly historyDir: string;
  readonly windowMs: number;
  /** 0: only at shutdown */
  readonly intervalMs: number;
  readonly daemonVersion: string;
  readonly identity: IdentityStage;
  readonly mirror?: OtelMirror;
  /** resolves once every event accepted so far is written to its log (the log sink's flush) */
  readonly drained: () => Promise<void>;
  /**
   * the batches published but whose durable write has not settled yet (the bus's `inFlight`): the capture
   * already holds their state (stamped before it), so their sessions are covered up to them
   */
  readonly inFlight?: () => Iterable<readonly AepEvent[]>;
  readonly log: Logger;
  /** hears every event read back from the logs at start (the spool's exactly-once keys) */
  readonly replayed?: (ev: AepEvent) => void;
  /** at capture: the spooled hooks already published whose files are not deleted yet */
  readonly spoolKeys?: () => readonly string[];
  readonly now?: () => number;
}

/** How the start-up state was rebuilt, for the log line and `/healthz`. */
export interface RestoreReport {
  readonly from: 'snapshot' | 'replay';
  /** why the snapshot was not used (absent, corrupt, another version, inconsistent …) */
  readonly fallback?: string;
  readonly ms: number;
  readonly lanes: number;
  readonly replay: ReplayCounts;
  /** spool keys the snapshot says are already in the log (the spool must delete, not ingest, those files) */
  readonly spoolKeys: readonly string[];
  /** the highest epoch among the events read back and the snapshot's own (-1: none): the next epoch is past it */
  readonly highestEpoch: number;
}
