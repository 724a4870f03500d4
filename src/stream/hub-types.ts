import type { CaptureLevel } from '../core/capture-levels.js';
import type { Position, WireEvent } from '../aep/wire.js';

/** A compiled `attr-match` filter (AEP-0003 §6): true when the event matches. */
export type EventFilter = (w: WireEvent) => boolean;

/** What one subscription asks for (SSE query or WebSocket `subscribe`), already validated. */
export interface SubscriptionSpec {
  readonly filter: EventFilter;
  /** the capture ceiling (AEP-0003 §6.4); absent = as stored */
  readonly ceiling?: CaptureLevel;
  /** resume positions, or every held session from its earliest event; absent = live only */
  readonly from?: readonly Position[] | 'all';
  /** false (`live=0`): replay only, then the subscription ends */
  readonly live?: boolean;
}

/**
 * The transport end of one subscription (an SSE response, one `subscribe` on
 * a WebSocket). The hub calls it in order; it never throws back.
 */
export interface SubscriberSink {
  /** one event, as `line` (the ceiling already applied: `line` is `w.line` when nothing was down-leveled) */
  deliver(w: WireEvent, line: string): void;
  /** a requested position predates what the buffer holds (AEP-0003 §5): sent before the replayed events of `session` */
  exhausted(session: string, earliest: { readonly epoch: number; readonly seq: number }): void;
  /** replay is done (with `live: false`, the subscription ends after this) */
  replayed(): void;
  /**
   * The hub gives up on this subscriber (too slow: it would have to drop a
   * `notice`-or-above event, AEP-0003 §8.4; or the daemon is stopping). The
   * transport closes it (WS: `closing` with its positions; SSE: ends the response).
   */
  kick(reason: string): void;
  /** bytes written to the transport and not yet sent (`ws.bufferedAmount`, `res.writableLength`) */
  pending(): number;
  /** resolves when the transport's buffer has drained (replay is paced by it) */
  drained(): Promise<void>;
}

export interface Subscription {
  /** stop delivering (the client went away, `unsubscribe`); idempotent */
  close(): void;
}

/** Why a subscription was refused: the closed set of AEP-0003 §6.5 this hub can raise. */
export interface SubscribeRefusal {
  readonly code: 'limit-exceeded';
  readonly detail: string;
}

/**
 * The fan-out core (AEP-0003 §5, §6, §8.4): bounded per-session replay
 * buffers with admission dedupe on `(source, id)`, live fan-out of every
 * published event as received (duplicates included), filters and capture
 * ceilings per subscription, backpressure per subscriber.
 */
export interface StreamHubApi {
  /**
   * Events whose durable write settled (or that are being rebuilt from the
   * history at start): each is admitted to its session's buffer unless its
   * `(source, id)` is already held or remembered, and delivered live to every
   * matching subscription, admitted or not.
   */
  publish(events: readonly WireEvent[]): void;
  /** whether this `(source, id)` was published already (and is still remembered) */
  knows(w: Pick<WireEvent, 'source' | 'id'>): boolean;
  /** replay (paced by the sink's drain) and then live delivery; or the §6.5 refusal */
  subscribe(spec: SubscriptionSpec, sink: SubscriberSink): Subscription | SubscribeRefusal;
  /** this daemon's own sessions the buffer holds that have not ended (the roster's own entries; commands to them) */
  ownSessions(): readonly string[];
  isOwnSession(session: string): boolean;
  /** the replay capability as advertised (hello, discovery document) */
  readonly replay: { readonly buffer: number; readonly all: true };
  /** counters for /healthz `stream` */
  stats(): Record<string, number>;
  /** kick every subscriber with `reason` (daemon stopping) */
  close(reason: string): void;
}

/** What became of a batch of ingested events (POST /events, an emitter's WebSocket frames). */
export type IngestOutcome =
  | { readonly status: 'accepted'; readonly accepted: number; readonly duplicates: number }
  | { readonly status: 'refused'; readonly reason: string }
  /** refused whole for good, not for now (no retry helps): the event at `index` (0-based) takes what is this daemon's own */
  | { readonly status: 'conflict'; readonly index: number; readonly reason: string };

/**
 * The bridge entry for events from OTHER emitters, already validated
 * (`checkEnvelope`): dedupe on `(source, id)`, written to the history under
 * their own agent, mirrored into spans, then published to the hub. They keep
 * their own identity and bytes: nothing is re-sequenced or stamped. Settles
 * once the history has them (the 202 waits for it); never rejects.
 */
export interface Ingress {
  ingest(events: readonly WireEvent[]): Promise<IngestOutcome>;
}
