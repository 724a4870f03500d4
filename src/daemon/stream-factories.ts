import type { StreamFactories } from './stream-wiring.js';

/**
 * The stream's parts for the daemon process. Filled in when the hub
 * (src/stream/stream-hub.ts), the routes (src/stream/http) and the endpoint
 * (src/stream/socket) are in the tree; until then the daemon runs without the
 * stream (no hub, no /events, /stream or /socket). The intended shape:
 *
 *   hub: (o) => new StreamHub(o),
 *   routes: (d) => ({ stream: { hub: d.hub, ingress: d.ingress, auth: new StreamAuth(d), heartbeatMs: d.heartbeatMs,
 *     ingestMaxEvents: d.ingestMaxEvents, maxBodyBytes: d.maxBodyBytes, ownSourcePrefix: d.ownSourcePrefix, log: d.log } }),
 *   socket: (d) => createSocketEndpoint({ ...d, auth: new StreamAuth(d), hostAllowed: (h) => d.guard.hostAllowed(h),
 *     maxFrameBytes: d.maxBodyBytes }),
 */
export const streamFactories: StreamFactories | undefined = undefined;
