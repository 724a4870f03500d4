import type { CaptureLevel } from '../capture/levels.js';

export type Severity = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical';

/** A full AEP 0.1 envelope as this adapter emits it (AEP-0001 §5). */
export interface AepEvent {
  readonly aep: '0.1';
  readonly id: string;
  readonly type: string;
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
  readonly data: Record<string, unknown>;
}

/** The extension attributes an event may carry from its envelope (AEP-0001 §5.4). */
export type AepExtensions = Pick<AepEvent, 'hermesmodel' | 'hermesplatform' | 'hermesprovider'>;

/** The lane for events whose session cannot be known (approval payloads carry `session_id: ""`). */
export const UNKNOWN_SESSION = 'unknown';
