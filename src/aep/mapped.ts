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
}

/** One hook, mapped: its keys and its events, in order. */
export interface MappedHook {
  readonly keys: HookKeys;
  readonly events: readonly KeyedEvent[];
}
