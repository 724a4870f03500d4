import type { CaptureLevel } from '../core/capture-levels.js';
import type { AepType, XHermesFallbackType } from './lifecycle.js';
import type { KnownType, PayloadOf } from './payloads.js';
import type { Severity } from '../core/severity.js';

export type { Severity } from '../core/severity.js';

/** The envelope attributes of an AEP 0.1 event as this adapter emits it (AEP-0001 §5), all but `type` and `data`. */
export interface AepEnvelope {
  readonly aep: '0.1';
  readonly id: string;
  readonly time: string;
  readonly source: string;
  readonly agent: string;
  readonly session: string;
  readonly run?: string;
  readonly seq: number;
  readonly epoch: number;
  readonly cause?: string;
  readonly subject?: string;
  readonly severity: Severity;
  readonly capture: CaptureLevel;
  /** W3C traceparent of the span this event belongs to, when the OTel mirror is on. */
  readonly traceparent?: string;
  /** extension attributes (AEP-0001 §5.4): the model, platform and provider Hermes reports */
  readonly hermesmodel?: string;
  readonly hermesplatform?: string;
  readonly hermesprovider?: string;
  /** extension attribute: the event came from the shim's spool (the daemon was down when the hook fired); the spool file's key */
  readonly hermesspool?: string;
  /** extension attribute on `session.ended`: `idle` when the daemon ended a session Hermes stopped speaking in (AEP_SESSION_IDLE_S), absent when Hermes ended it */
  readonly hermesendedby?: 'idle';
}

/**
 * An event of type `T`: its `data` is the type's payload, every member
 * optional, since at capture `none` an event carries no payload at all
 * (AEP-0001 §8.2); other members an emitter added read as `unknown`.
 */
export type AepEventOf<T extends AepType> = AepEnvelope & {
  readonly type: T;
  readonly data: (T extends KnownType ? Partial<PayloadOf<T>> : unknown) & { readonly [member: string]: unknown };
};

/** A full AEP event as this adapter emits it: a union over its types, so a test of `type` narrows `data`. */
export type AepEvent = { [T in KnownType]: AepEventOf<T> }[KnownType] | AepEventOf<XHermesFallbackType>;

/** Whether `ev` is of one of `types` (narrows its `data`). */
export const isType = <T extends AepType>(ev: AepEvent, ...types: readonly T[]): ev is Extract<AepEvent, { readonly type: T }> =>
  (types as readonly string[]).includes(ev.type);

/** The extension attributes an event may carry (AEP-0001 §5.4): from its Hermes envelope, or the daemon's idle close. */
export type AepExtensions = Pick<AepEnvelope, 'hermesmodel' | 'hermesplatform' | 'hermesprovider' | 'hermesendedby'>;

/** The lane for events whose session cannot be known (approval payloads carry `session_id: ""`). */
export const UNKNOWN_SESSION = 'unknown';
