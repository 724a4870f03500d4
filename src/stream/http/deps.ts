import type { Logger } from '../../daemon/diagnostics.js';
import type { Ingress, StreamHubApi } from '../hub-types.js';
import type { StreamAuth } from '../stream-auth.js';

/** What the stream's HTTP routes are built from (the daemon's wiring: src/daemon/stream-factories.ts). */
export interface StreamHttpDeps {
  readonly hub: StreamHubApi;
  readonly ingress: Ingress;
  readonly auth: StreamAuth;
  /** SSE `: ping` interval */
  readonly heartbeatMs: number;
  /** events one POST may carry (413 past it) */
  readonly ingestMaxEvents: number;
  /** bytes one POST may carry (413 past it) */
  readonly maxBodyBytes: number;
  /** events from this source prefix are this daemon's own emitter's: never taken from outside */
  readonly ownSourcePrefix: string;
  readonly log: Logger;
}
