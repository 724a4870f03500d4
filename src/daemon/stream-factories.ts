import { compileFilter } from '../stream/attr-match.js';
import { parseFrom, parseLastEventId } from '../stream/resume-from.js';
import { createSocketEndpoint } from '../stream/socket/endpoint.js';
import { StreamAuth } from '../stream/stream-auth.js';
import { StreamHub } from '../stream/stream-hub.js';
import type { StreamCommonDeps, StreamFactories } from './stream-wiring.js';

/** One auth per daemon, shared by the HTTP routes and the WebSocket endpoint (their refusal counts add up). */
const auths = new WeakMap<StreamCommonDeps, StreamAuth>();
const authOf = (d: StreamCommonDeps): StreamAuth => {
  let a = auths.get(d);
  if (!a)
    auths.set(
      d,
      (a = new StreamAuth({
        ...(d.token !== undefined ? { token: d.token } : {}),
        ...(d.readToken !== undefined ? { readToken: d.readToken } : {}),
        openRead: d.openRead,
        allowedOrigins: d.allowedOrigins,
      })),
    );
  return a;
};

/** The stream's parts for the daemon process: the hub, the HTTP routes and the WebSocket endpoint. */
export const streamFactories: StreamFactories = {
  hub: (o) => new StreamHub(o),
  routes: (d) => ({
    stream: {
      hub: d.hub,
      ingress: d.ingress,
      auth: authOf(d),
      heartbeatMs: d.heartbeatMs,
      ingestMaxEvents: d.ingestMaxEvents,
      maxBodyBytes: d.maxBodyBytes,
      ownSourcePrefix: d.ownSourcePrefix,
      refusals: d.refusals,
      ...(d.control ? { control: d.control } : {}),
      parsers: { compileFilter, parseFrom, parseLastEventId },
      log: d.log,
    },
  }),
  socket: (d) =>
    createSocketEndpoint({
      hub: d.hub,
      ingress: d.ingress,
      auth: authOf(d),
      hostAllowed: (h) => d.guard.hostAllowed(h),
      compileFilter,
      parseFrom,
      heartbeatMs: d.heartbeatMs,
      identity: d.identity,
      maxFrameBytes: d.maxBodyBytes,
      ownSourcePrefix: d.ownSourcePrefix,
      refusals: d.refusals,
      ...(d.control ? { control: d.control } : {}),
      log: d.log,
    }),
};
