import type { AepEvent, Severity } from './event.js';
import { eventLine } from './event-line.js';
import { DEFAULT_CAPTURE, isCaptureLevel, type CaptureLevel } from '../core/capture-levels.js';

/** A resume position (AEP-0001 §7, AEP-0003 §7): strictly after it is what a resuming consumer gets. */
export interface Position {
  readonly session: string;
  readonly epoch: number;
  readonly seq: number;
}

/** Where an event came from: this daemon's own emitter (Hermes), or another emitter through ingest (POST or WebSocket). */
export type Origin = 'own' | 'ingest';

/**
 * One AEP event as every binding carries it: the parsed envelope (frozen) and
 * its one-line JSON, the exact bytes written to the history, sent as an SSE
 * `data:` line and as a WebSocket text frame. An ingested event keeps the
 * bytes it arrived with (one line of a batch, or a single body without its
 * line breaks only when it had none), so what comes out is byte-identical
 * to what went in. The routing attributes are read once, with the
 * AEP-0001 §5.1 defaults applied.
 */
export interface WireEvent {
  readonly event: Readonly<Record<string, unknown>>;
  readonly line: string;
  readonly id: string;
  readonly source: string;
  readonly agent: string;
  readonly type: string;
  /** absent for agent-scoped events (AEP-0001 §5.2) */
  readonly session?: string;
  /** absent for agent-scoped and foreign-emitter session events (commands, `attention.routed`) */
  readonly seq?: number;
  readonly epoch: number;
  readonly severity: Severity;
  readonly capture: CaptureLevel;
  readonly origin: Origin;
}

const SEVERITIES: readonly Severity[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical'];
export const severityRank = (s: Severity): number => SEVERITIES.indexOf(s);
export const isSeverity = (x: unknown): x is Severity => typeof x === 'string' && (SEVERITIES as readonly string[]).includes(x);

/**
 * The wire form of an envelope already known to be valid (this daemon's own
 * events, or one `checkEnvelope` accepted): `line` must be its JSON on one line.
 */
export function wireOf(event: Readonly<Record<string, unknown>>, line: string, origin: Origin): WireEvent {
  const str = (k: string) => (typeof event[k] === 'string' ? event[k] : undefined);
  const int = (k: string) => (Number.isInteger(event[k]) ? (event[k] as number) : undefined);
  const session = str('session');
  const seq = int('seq');
  const severity = event['severity'];
  const capture = event['capture'];
  return Object.freeze({
    event,
    line,
    id: str('id') ?? '',
    source: str('source') ?? '',
    agent: str('agent') ?? '',
    type: str('type') ?? '',
    ...(session !== undefined ? { session } : {}),
    ...(seq !== undefined ? { seq } : {}),
    epoch: int('epoch') ?? 0,
    severity: isSeverity(severity) ? severity : 'info',
    capture: isCaptureLevel(capture) ? capture : DEFAULT_CAPTURE,
    origin,
  });
}

/** This daemon's own event: its wire form is its history line, the same string (made once, `eventLine`). */
export const wireFromOwn = (ev: AepEvent): WireEvent => wireOf(ev as unknown as Readonly<Record<string, unknown>>, eventLine(ev), 'own');

/** (epoch, seq) order within a session (AEP-0001 §7.3): negative when `a` is before `b`. */
export const comparePosition = (a: { epoch: number; seq: number }, b: { epoch: number; seq: number }): number =>
  a.epoch !== b.epoch ? a.epoch - b.epoch : a.seq - b.seq;

/** The dedupe key of AEP-0001 §7.4. */
export const dedupeKey = (w: Pick<WireEvent, 'source' | 'id'>): string => `${w.source}\u0000${w.id}`;
