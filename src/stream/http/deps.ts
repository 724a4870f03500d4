import type { OwnControlPort } from '../socket/frames.js';
import type { Logger } from '../../core/logger.js';
import type { StreamAuth } from '../stream-auth.js';
import type { EventFilter, Ingress, StreamHubApi } from '../hub-types.js';
import type { Position } from '../../aep/wire.js';
import type { OwnRefusals } from '../own-source.js';

/** A parse that fails closed with a content-free reason. */
export type Parsed<T> = ({ readonly ok: true } & T) | { readonly ok: false; readonly detail: string };

/** The subscription parsers (AEP-0003 §6.1/§6.2, §7): `src/stream/attr-match.ts` and `src/stream/resume-from.ts`. */
export interface SubscriptionParsers {
  compileFilter(json: unknown): Parsed<{ filter: EventFilter }>;
  parseFrom(json: unknown): Parsed<{ from: readonly Position[] | 'all' }>;
  parseLastEventId(s: string): Position | undefined;
}

/** What the stream routes need (the daemon builds it; tests build small ones). */
export interface StreamHttpDeps {
  readonly hub: StreamHubApi;
  readonly ingress: Ingress;
  readonly auth: StreamAuth;
  readonly parsers: SubscriptionParsers;
  /** `: ping` comment interval on every SSE response */
  readonly heartbeatMs: number;
  /** events one POST may carry */
  readonly ingestMaxEvents: number;
  readonly maxBodyBytes: number;
  /** JSON values + keys an ingest body may hold (AEP_MAX_BODY_NODES) */
  readonly maxBodyNodes?: number;
  /** `aep://{host}/agent/hermes/`: this daemon's own emitter, which nobody else may speak for */
  readonly ownSourcePrefix: string;
  /** told of each event refused for naming the own emitter (the daemon counts them in /healthz `stream.ingest`) */
  readonly refusals?: OwnRefusals;
  /** what this daemon's own control target accepts (the discovery document declares it) */
  readonly control?: Pick<OwnControlPort, 'accepts'>;
  readonly log: Logger;
}
