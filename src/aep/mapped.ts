import type { AepExtensions } from './event.js';
import type { AepType, XHermesFallbackType } from './lifecycle.js';
import type { KnownType, PayloadOf } from './payloads.js';

/** One AEP event of type `T` as a mapping produces it: no identity, no clock; its whole payload. */
export type MappedEventOf<T extends AepType> = { readonly type: T; readonly data: PayloadOf<T>; readonly subject?: string };

/** One AEP event as a mapping produces it: a union over the types, so a test of `type` narrows `data`. */
export type MappedEvent = { [T in KnownType]: MappedEventOf<T> }[KnownType] | MappedEventOf<XHermesFallbackType>;

/**
 * A mapped event with the extension attributes (AEP-0001 §5.4) its envelope
 * carries. The daemon's control step may add events to a hook (the operator
 * gate's card, steering audits): `cause` names what caused such an event when
 * the hook's keys cannot (a command), and `joins` overrides the hook's joins
 * for it alone. The pure mapping sets neither.
 */
export type KeyedEvent = MappedEvent & { readonly ext?: AepExtensions; readonly cause?: string; readonly joins?: Partial<Joins> };

/**
 * What pairs an event with the rest of its unit beyond what the event says
 * itself. Live, the mapper reads them off the hook; on restore, off the event
 * read back from the history (whatever the history does not carry is absent).
 */
export interface Joins {
  /** the tool call the event belongs to */
  readonly callId?: string;
  /**
   * The event comes from an approval: its card pairs with its outcome by `key`,
   * tool call breaking ties. `key` absent: not known (read back from a lane
   * the history does not name), so nothing can pair with the card.
   */
  readonly approval?: { readonly key?: string };
  /** a `tool.requested` whose call may raise a form card: if none follows, its outcome closes nothing */
  readonly formCall?: boolean;
  /** the operator gate's card (src/control/): the control target closes it, no lane pairs it */
  readonly gate?: boolean;
}

/** The AEP-level keys of one hook, read by the mapper: what identity needs to place and pair its events. */
export interface HookKeys extends Joins {
  /** the session the hook names */
  readonly session?: string;
  /** a session the hook joins when it names none, if that session already has a lane (never mints one) */
  readonly joinSession?: string;
  /** the run this hook opens or closes (its own turn) */
  readonly run?: string;
  /** the run its events belong to when it has no turn of its own (the parent's) */
  readonly parentRun?: string;
  /** the hook's events belong to no run, even when its session has one open (an auxiliary call outside any turn) */
  readonly outsideRun?: boolean;
  /**
   * The session the hook's turn began in, when that is not the hook's own: the vendor rotated the session id mid-turn
   * (context compression). The mapping then opens the hook's session with a `session.started` naming it as parent;
   * identity lets that opening through only while the lane has none.
   */
  readonly rotatedFrom?: string;
}

/**
 * What the daemon's steps need of one hook beyond its events, read off the
 * vendor payload by the mapping (no other folder reads a Hermes payload).
 * The flags are plain data. The values are read by calling: they are the
 * payload's own, not through secret detection (they decide, they are never
 * written), so they never travel as data (a serialised mapped hook holds none
 * of them).
 */
export interface HookFacts {
  /** a gate may hold this hook's reply (the call waits for an answer): a tool call about to run */
  readonly mayHold: boolean;
  /** this hook's reply may carry steering (queued instructions as context): a turn about to start */
  readonly maySteer: boolean;
  /** the tool as the vendor named it (a gate tests its tool pattern on it when the hook may be held); undefined: none */
  toolName(): string | undefined;
  /** the model server's address as the vendor sent it (path and query kept: the pricer tells a local server or a coding plan by it) */
  modelServer(): string | undefined;
  /** the telemetry schema version the hook declared (the drift sentinel), whatever its type; undefined: none */
  schemaVersion(): unknown;
  /** a streamed model response's moment this hook marks (its start, a text chunk, its end); undefined: none */
  stream(): StreamMark | undefined;
}

/**
 * One moment of a streamed model response: which response (the turn and the
 * model call's 1-based index in it) and what happened. `text`: a chunk of the
 * answer's text arrived (the first one is the first token).
 */
export interface StreamMark {
  readonly phase: 'start' | 'text' | 'end';
  readonly run: string;
  readonly call: number;
}

/** One hook, mapped: its keys, its events in order, and what the daemon's steps need of it. */
export interface MappedHook {
  readonly keys: HookKeys;
  readonly events: readonly KeyedEvent[];
  readonly facts: HookFacts;
}
