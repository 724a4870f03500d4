import { MAX_DEPTH } from './limits.js';

/**
 * The error catalogue: every code a route or a WebSocket frame of the daemon
 * answers, with its HTTP status (`'frame'`: only ever in a WebSocket `error`
 * frame), where it is answered, and its one human message. docs/errors.md
 * documents each (test/unit/core/errors.test.ts keeps the two in step).
 *
 * One spelling, the house style of AEP-0003: lower-case words joined by
 * hyphens (`invalid-event`, `invalid-filter`, `limit-exceeded`,
 * `version-unsupported` are spec'd there). One body shape over HTTP,
 * `{error, detail}`: the one AEP-0003 §3.2 prescribes for `POST /events` and
 * the members a WebSocket `error` frame carries (`code`, `detail`), so a
 * client reads every refusal of the daemon the same way. A route may give a
 * more specific detail than the message (the line that failed, the limit
 * hit); never content, never a credential.
 *
 * Control acks' nack reasons (aep/payloads.ts `NackReason`) are AEP-0004
 * vocabulary, not daemon errors: they are not here.
 */
export type ErrorWhere = '/hook' | '/webhook' | '/events' | '/stream' | '/socket' | '/ui/command' | 'frame' | 'any route';

export interface ErrorSpec {
  /** the HTTP status it is answered with; `'frame'`: a WebSocket error frame only */
  readonly status: number | 'frame';
  readonly where: readonly ErrorWhere[];
  readonly message: string;
}

export const ERRORS = {
  // the hook route (/hook): bodies and headers
  'invalid-envelope': { status: 400, where: ['/hook', '/webhook'], message: 'not a Hermes hook envelope' },
  'invalid-json': { status: 400, where: ['/hook', '/webhook', '/ui/command'], message: 'body is not valid JSON' },
  'empty-body': { status: 400, where: ['/hook', '/webhook', '/ui/command'], message: 'body is empty' },
  'too-deep': { status: 400, where: ['/hook', '/webhook'], message: `body nests deeper than ${MAX_DEPTH} levels` },
  'too-many-nodes': { status: 413, where: ['/hook', '/webhook'], message: 'body holds more JSON values and keys than AEP_MAX_BODY_NODES' },
  'bad-drop-report': { status: 400, where: ['/hook'], message: 'the dropped-hooks header must be one decimal count (0..999999999)' },
  'bad-spool-key': { status: 400, where: ['/hook'], message: 'the spool key header must be a spool file key' },
  'parser-unavailable': { status: 503, where: ['/hook', '/webhook'], message: 'the body could not be parsed now; retry' },
  busy: { status: 503, where: ['/hook', '/webhook'], message: 'too many large bodies are being read now; nothing of this one was recorded; retry' },
  'spool-draining': { status: 503, where: ['/hook', '/webhook'], message: 'the daemon is ingesting its spool; the shim spools this hook' },
  // Hermes's outbound webhooks (/webhook): the HMAC is this route's authentication
  'bad-signature': {
    status: 401,
    where: ['/webhook'],
    message: 'X-Hermes-Signature-256 is missing or is not the HMAC-SHA256 of the body under the webhook secret',
  },
  'invalid-delivery': { status: 400, where: ['/webhook'], message: 'not a Hermes outbound webhook delivery (delivery_id, timestamp, hook_event_name)' },
  'delivery-mismatch': { status: 400, where: ['/webhook'], message: 'X-Hermes-Event or X-Hermes-Delivery differs from the signed body' },
  'stale-delivery': { status: 400, where: ['/webhook'], message: "the delivery's timestamp is outside AEP_WEBHOOK_WINDOW_S of the daemon's clock" },
  // bodies of the hook and ingest routes alike
  'too-large': { status: 413, where: ['/hook', '/webhook', '/events', '/ui/command'], message: 'body exceeds AEP_MAX_BODY_BYTES' },
  'bad-content-length': { status: 400, where: ['/hook', '/webhook', '/events', '/ui/command'], message: 'content-length does not match the body' },
  'unsupported-media-type': { status: 415, where: ['/hook', '/webhook', '/events', '/ui/command'], message: 'content-type must be application/json' },
  unavailable: {
    status: 503,
    where: ['/hook', '/webhook', '/events', 'frame'],
    message: 'the event log cannot take events now; nothing was recorded; retry later',
  },
  // the stream's ingest (/events)
  'invalid-event': { status: 400, where: ['/events', 'frame'], message: 'an event fails envelope validation' },
  conflict: { status: 409, where: ['/events'], message: "an event names one of this daemon's own sessions, whose positions are assigned here" },
  'bad-body': { status: 400, where: ['/events', '/ui/command'], message: 'the body could not be read' },
  // subscribing (/stream, /socket)
  'invalid-filter': { status: 400, where: ['/stream', 'frame'], message: 'the subscription request is invalid' },
  'limit-exceeded': { status: 429, where: ['/stream', '/ui/command', 'frame'], message: 'the subscription would exceed a limit of the daemon' },
  // the live view's answers (/ui/command)
  'invalid-command': { status: 400, where: ['/ui/command'], message: 'not an answer or an instruction the live view sends' },
  'no-ack': { status: 504, where: ['/ui/command'], message: 'the control target did not acknowledge the command within its ack window' },
  // who may ask (every route)
  unauthorized: { status: 401, where: ['any route', 'frame'], message: 'this needs Authorization: Bearer <token>' },
  'forbidden-host': { status: 403, where: ['any route'], message: "Host must be localhost, 127.0.0.1, [::1] or one of the daemon's own names" },
  'forbidden-origin': { status: 403, where: ['any route'], message: 'requests made by web pages (with an Origin header) are refused' },
  'not-found': { status: 404, where: ['any route'], message: 'no such route' },
  stopping: { status: 503, where: ['/socket', '/ui/command'], message: 'the daemon is stopping' },
  internal: { status: 500, where: ['any route'], message: 'the daemon could not process this request' },
  'start-refused': {
    status: 503,
    where: ['any route'],
    message: 'the daemon refused to start (AEP_START_REFUSED=serve): nothing is recorded; the shim spools hooks until it starts',
  },
  // WebSocket frames only (AEP-0003 §4, AEP-0004 §4)
  'invalid-frame': { status: 'frame', where: ['frame'], message: 'a frame is a JSON object with a string type' },
  'hello-required': { status: 'frame', where: ['frame'], message: 'the first frame must be hello' },
  'invalid-hello': { status: 'frame', where: ['frame'], message: 'the hello frame is invalid' },
  'version-unsupported': { status: 'frame', where: ['frame'], message: 'no version in common' },
  'invalid-request': { status: 'frame', where: ['frame'], message: 'the request frame is invalid' },
  'no-route': { status: 'frame', where: ['frame'], message: 'no connected emitter claims this session' },
  ambiguous: { status: 'frame', where: ['frame'], message: 'more than one connected emitter claims this session' },
  unsupported: { status: 'frame', where: ['frame'], message: 'the target accepts no such command' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

/** The codes answered over HTTP (every one but the frame-only codes). */
export type HttpErrorCode = { [C in ErrorCode]: (typeof ERRORS)[C]['status'] extends number ? C : never }[ErrorCode];

/** The HTTP body of one refusal: `{error, detail}` (the catalogue's message unless a more specific detail is given), and any members the route adds. */
export interface ErrorBody {
  readonly error: ErrorCode;
  readonly detail: string;
  readonly [extra: string]: unknown;
}

export function errorBody(code: ErrorCode, detail?: string, extra: Readonly<Record<string, unknown>> = {}): ErrorBody {
  return { error: code, detail: detail ?? ERRORS[code].message, ...extra };
}

/** The HTTP status a code is answered with. */
export function errorStatus(code: HttpErrorCode): number {
  return ERRORS[code].status;
}

/** A refusal as a route answers it: its status and its body. */
export interface HttpRefusal {
  readonly status: number;
  readonly body: ErrorBody;
}

export function httpRefusal(code: HttpErrorCode, detail?: string, extra?: Readonly<Record<string, unknown>>): HttpRefusal {
  return { status: errorStatus(code), body: errorBody(code, detail, extra) };
}

export function isErrorCode(s: string): s is ErrorCode {
  return Object.hasOwn(ERRORS, s);
}
