import type { IncomingMessage } from 'node:http';
import type { Logger } from '../../core/logger.js';
import type { ErrorBody } from '../../core/errors.js';
import type { EventFilter, Ingress, StreamHubApi } from '../hub-types.js';
import type { Position } from '../../aep/wire.js';
import type { OwnControlPort } from './frames.js';
import type { OwnRefusals } from '../own-source.js';

/** What a request may do on the stream surface (the shape `StreamAuth.check` returns, src/stream/stream-auth.ts). */
export type StreamAccess = { readonly kind: 'authenticated' } | { readonly kind: 'watch'; readonly browser: boolean };

/** A refused request: an HTTP status and a fixed-reason body (never the credential). */
export interface StreamRefusal {
  readonly status: 401 | 403;
  readonly body: ErrorBody;
}

/** The part of `StreamAuth` the socket endpoint calls. */
export interface StreamAuthLike {
  check(req: IncomingMessage, need: 'read' | 'write'): StreamAccess | StreamRefusal;
}

export type FilterCompile = (json: unknown) => { ok: true; filter: EventFilter } | { ok: false; detail: string };
export type FromParse = (json: unknown) => { readonly ok: true; readonly from: readonly Position[] | 'all' } | { readonly ok: false; readonly detail: string };

export interface SocketDeps {
  readonly hub: StreamHubApi;
  readonly ingress: Ingress;
  readonly auth: StreamAuthLike;
  /** the Host check shared with the HTTP routes (request-guard `hostAllowed`) */
  readonly hostAllowed: (host: string | undefined) => boolean;
  /** `compileFilter` of src/stream/attr-match.ts (AEP-0003 §6) */
  readonly compileFilter: FilterCompile;
  /** `parseFrom` of src/stream/resume-from.ts (AEP-0003 §5, §7) */
  readonly parseFrom: FromParse;
  /** interval of the endpoint's `ping` frames; a peer silent for 3 of them is dropped */
  readonly heartbeatMs: number;
  readonly identity: { readonly agent: 'hermes'; readonly instance: string };
  /** the largest text frame accepted (ws closes with 1009 beyond it) */
  readonly maxFrameBytes: number;
  /** events whose `source` starts with it belong to this daemon's own emitter: never ingested from a peer */
  readonly ownSourcePrefix?: string;
  /** told of each event refused for naming the own emitter (the daemon counts them in /healthz `stream.ingest`) */
  readonly refusals?: OwnRefusals;
  /** the control target of this daemon's own sessions; absent: commands to them are refused `unsupported` */
  readonly control?: OwnControlPort;
  readonly log: Logger;
}
