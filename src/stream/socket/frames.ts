import type { StreamHubApi } from '../hub-types.js';
import type { WireEvent } from '../../aep/wire.js';
import { ERRORS, type ErrorCode } from '../../core/errors.js';

/** The protocol versions this endpoint speaks (AEP-0003 §4 rule 1). */
export const VERSIONS = ['0.1'] as const;
export const ACK_WINDOW_MS = 10_000;

/** A parsed text frame: an object whose `type` is a string. */
export type Frame = Readonly<Record<string, unknown>> & { readonly type: string };

/** Parse one text frame; undefined when it is not a JSON object with a string `type`. */
export function parseFrame(text: string): { frame: Frame; parsed: unknown } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const type = (parsed as Record<string, unknown>)['type'];
  return typeof type === 'string' ? { frame: parsed as Frame, parsed } : undefined;
}

/** An Event carries a dotted `type`; a frame's has no dot (AEP-0003 §2). */
export const isEventType = (type: string): boolean => type.includes('.');

const CORE_COMMANDS = new Set(['control.attention.respond', 'control.cancel', 'control.pause', 'control.resume']);
/** The command types of AEP-0004 §5 and the vendor namespace `x.{vendor}.control.{verb}`. */
export const isCommandType = (type: string): boolean => CORE_COMMANDS.has(type) || /^x\.[a-z0-9_-]+\.control\.[a-z0-9_.-]+$/.test(type);

/**
 * The control target behind this daemon's own sessions (src/control/): what
 * it declares, and where a command addressed to one of them goes.
 */
export interface OwnControlPort {
  /** exactly the command types the enabled gates accept (`[]` while they are off) */
  accepts(): readonly string[];
  /** one validated command for an own session, from an authenticated binding */
  command(w: WireEvent): void;
}

/** This daemon's own control declaration (AEP-0004 §4 item 2): what its target accepts, and the ack window. */
export const ownControl = (port?: Pick<OwnControlPort, 'accepts'>) => ({ accepts: [...(port?.accepts() ?? [])], ack_window_ms: ACK_WINDOW_MS });

/** The capabilities of this endpoint's `hello` (AEP-0003 §4; the same facts as the discovery document, §3.4). */
export function capabilities(hub: StreamHubApi, port?: Pick<OwnControlPort, 'accepts'>): Record<string, unknown> {
  return {
    filters: ['attr-match'],
    replay: hub.replay,
    capture: ['none', 'metadata', 'redacted', 'full'],
    control: ownControl(port),
    roster: {},
    experimental: {},
  };
}

/** An id a request may carry to be echoed (string or number); undefined otherwise. */
export function requestId(frame: Frame): string | number | undefined {
  const id = frame['id'];
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : undefined;
}

/**
 * A connection-scoped `error` frame; `id` answers a request, `cause` a command or event (AEP-0004 §4). `code` is
 * the catalogue's (core/errors.ts); `detail` its message unless a more specific one is given.
 */
export function errorFrame(
  code: ErrorCode,
  detail: string = ERRORS[code].message,
  corr: { id?: string | number; cause?: string } = {},
  extra: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    type: 'error',
    ...(corr.id !== undefined ? { id: corr.id } : {}),
    ...(corr.cause !== undefined ? { cause: corr.cause } : {}),
    code,
    detail,
    ...extra,
  });
}
