import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { DaemonConfig } from '../config/config.js';
import type { Degradation } from '../core/health-latch.js';
import { ForeignHistory, rebuildBuffer, type RebuildReport } from '../history/index.js';
import type { Ingress, StreamHubApi } from '../stream/hub-types.js';
import { BridgeIngress, type IngressMirror } from '../stream/ingress.js';
import type { OwnRefusals } from '../stream/own-source.js';
import { ownSessionCheck } from '../stream/own-sessions.js';
import type { WireEvent } from '../aep/wire.js';
import type { Consumer } from '../bus/consumer.js';
import { wireConsumer } from '../bus/wire-consumer.js';
import type { UpgradeHandler } from '../transport/listeners.js';
import type { RequestGuard } from '../transport/request-guard.js';
import type { Logger } from '../core/logger.js';
import type { ServerDeps } from './server.js';
import type { OwnControlPort } from '../stream/socket/frames.js';

/** What the HTTP routes and the WebSocket endpoint are built from (their own auth from `token`/`allowedOrigins`). */
export interface StreamCommonDeps {
  readonly hub: StreamHubApi;
  readonly ingress: Ingress;
  readonly token?: string;
  /** without `token`: the credential that may read over TCP (the hook token) */
  readonly readToken?: string;
  /** AEP_STREAM_READ=open */
  readonly openRead: boolean;
  readonly allowedOrigins: readonly string[];
  readonly guard: RequestGuard;
  readonly heartbeatMs: number;
  readonly ingestMaxEvents: number;
  readonly maxBodyBytes: number;
  /** events whose source names this (compared as URIs, own-source.ts) are this daemon's own emitter's: never ingested */
  readonly ownSourcePrefix: string;
  /** the bindings report each event refused for naming the own emitter here */
  readonly refusals: OwnRefusals;
  readonly identity: { readonly agent: 'hermes'; readonly instance: string };
  /** the control target of this daemon's own sessions */
  readonly control?: OwnControlPort;
  readonly log: Logger;
}

export interface SocketEndpointLike {
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(reason: string): Promise<void>;
  stats(): Record<string, unknown>;
}

/**
 * The stream's parts made elsewhere (src/stream/stream-hub.ts, src/stream/http,
 * src/stream/socket): passed in, so this module depends on their contracts
 * only. main.ts's `streamFactories` supplies them.
 */
export interface StreamFactories {
  hub(o: { buffer: number; sessions: number; maxBytes: number; clientBytes: number; subscriptions: number; log: Logger }): StreamHubApi;
  /** the server's stream wiring (`{ stream: StreamHttpDeps }`) */
  routes?(deps: StreamCommonDeps): Partial<ServerDeps>;
  socket?(deps: StreamCommonDeps): SocketEndpointLike;
}

export interface StreamWiring {
  readonly hub: StreamHubApi;
  readonly ingress: BridgeIngress;
  readonly rebuilt: RebuildReport;
  /** the hub as an after-durable consumer on the bus: this daemon's own events, once the history holds them */
  readonly own: Consumer;
  /** an own event already in the history, published again (a recorded ack re-emitted): to the hub */
  republish(w: WireEvent): void;
  readonly server: Partial<ServerDeps>;
  /** the listeners' WebSocket upgrade handler, when the endpoint exists */
  readonly upgrade?: UpgradeHandler;
  degraded(): Degradation[];
  healthz(): Record<string, unknown>;
  /** kick every subscriber and close the WebSocket endpoint (first on the way down: they would hold the listeners' grace) */
  closeClients(reason: string): Promise<void>;
  /** then, once nothing ingests any more: flush and close the ingest log */
  close(reason: string): Promise<void>;
}

export interface StreamWiringOptions {
  readonly config: DaemonConfig;
  readonly guard: RequestGuard;
  /** the hook token (TCP on): without AEP_TOKEN, its holders may read the stream over TCP */
  readonly readToken?: string;
  readonly mirror?: IngressMirror;
  readonly factories: StreamFactories;
  /** this daemon's own session logs as the start-up restore listed them (not stat'ed twice) */
  readonly ownFiles?: readonly { readonly path: string; readonly mtimeMs: number; readonly size: number }[];
  /** the control target: declared in hello and discovery, sent own-session commands, fed the own events the rebuild reads back */
  readonly control?: OwnControlPort & { restore(w: WireEvent): void };
  /** hears every own event the rebuild reads back (the daemon's epoch must be past theirs) */
  readonly readBack?: (w: WireEvent) => void;
  readonly log: Logger;
}

/**
 * The native stream (AEP-0003) around the hook path: the hub, refilled from
 * the history before the listeners open; the ingress writing other emitters'
 * events to `ingest/`; the routes and the endpoint from their factories.
 */
export async function wireStream(o: StreamWiringOptions): Promise<StreamWiring> {
  const { config, log } = o;
  const s = config.stream;
  const hub = o.factories.hub({
    buffer: s.buffer,
    sessions: s.sessions,
    maxBytes: s.maxBytes,
    clientBytes: s.clientBytes,
    subscriptions: s.subscriptions,
    log,
  });
  const control = o.control;
  const rebuilt = rebuildBuffer(
    config.historyDir,
    s,
    (ws) => {
      hub.publish(ws);
      for (const w of ws) {
        if (w.origin !== 'own') continue;
        control?.restore(w);
        o.readBack?.(w);
      }
    },
    o.ownFiles,
  );
  const foreign = new ForeignHistory({
    historyDir: config.historyDir,
    queueMax: config.historyQueueMax,
    fsyncIntervalMs: config.fsyncIntervalMs,
    log,
  });
  await foreign.start();
  const ingress = new BridgeIngress({
    hub,
    history: foreign,
    ...(o.mirror ? { mirror: o.mirror } : {}),
    ownsSession: ownSessionCheck(config.historyDir, hub),
    log,
  });
  let ownSourceRefused = 0;
  const common: StreamCommonDeps = {
    hub,
    ingress,
    ...(s.token !== undefined ? { token: s.token } : {}),
    ...(o.readToken !== undefined ? { readToken: o.readToken } : {}),
    openRead: s.openRead,
    allowedOrigins: s.allowedOrigins,
    guard: o.guard,
    heartbeatMs: s.heartbeatMs,
    ingestMaxEvents: s.ingestMaxEvents,
    maxBodyBytes: config.maxBodyBytes,
    ownSourcePrefix: `aep://${config.sourceHost}/agent/hermes/`,
    refusals: { ownSource: () => void ownSourceRefused++ },
    identity: { agent: 'hermes', instance: config.sourceHost },
    ...(control ? { control } : {}),
    log,
  };
  const server = o.factories.routes?.(common) ?? {};
  const socket = o.factories.socket?.(common);
  let clientsClosed = false;
  const closeClients = async (reason: string) => {
    if (clientsClosed) return;
    clientsClosed = true;
    hub.close(reason);
    await socket?.close(reason);
  };
  return {
    hub,
    ingress,
    rebuilt,
    own: wireConsumer('stream', (ws) => hub.publish(ws)),
    republish: (w) => hub.publish([w]),
    server,
    ...(socket ? { upgrade: (req: IncomingMessage, sock: Duplex, head: Buffer) => socket.handleUpgrade(req, sock, head) } : {}),
    degraded: () => {
      const d = foreign.health();
      return d ? [d] : [];
    },
    healthz: () => ({
      ...hub.stats(),
      replay: hub.replay,
      rebuilt: { ...rebuilt },
      ingest: { ...ingress.stats(), own_source_refused: ownSourceRefused, log: foreign.stats() },
      ...(socket ? { socket: socket.stats() } : {}),
    }),
    closeClients,
    close: async (reason) => {
      await closeClients(reason);
      await foreign.shutdown();
    },
  };
}
