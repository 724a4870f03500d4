import path from 'node:path';
import { monotonicFactory } from 'ulid';
import { bufferedPrng } from '../util/buffered-prng.js';
import { ConfigError } from '../config/read-env.js';
import { loadSettings, type Settings } from './settings.js';
import { createPricer } from '../usage/pricer.js';
import { commitEpoch, HighestEpoch, readStoredEpoch } from '../identity/epoch-store.js';
import { IdentityStage } from '../identity/identity-stage.js';
import { EndedSessions } from '../identity/ended-sessions.js';
import { JsonlHistorySink } from '../history/index.js';
import {
  AepLogSink,
  createExporter,
  createSampler,
  DeferredLogExporter,
  ExportFailures,
  METRICS_SHUTDOWN_MS,
  MetricsSink,
  OtelMirror,
  otlpLogExporter,
  SpanContextStage,
} from '../otel/index.js';
import { runtimeWarning } from './runtime.js';
import { createDiagnostics, type Logger } from '../core/logger.js';
import { Snapshotter } from '../state/snapshot.js';
import { createHookApp } from './hook-app.js';
import type { SpoolIngest } from './spool-ingest.js';
import type { EventBus } from '../bus/event-bus.js';
import { wireConsumer } from '../bus/wire-consumer.js';
import type { HookPipeline } from './pipeline.js';
import { EnvelopeRecorder } from './envelope-recorder.js';
import { ensurePrivateDirs } from './private-dirs.js';
import { serveRefusal } from './refused-start.js';
import { RequestGuard } from '../transport/request-guard.js';
import { DropReports } from '../transport/drop-report.js';
import { ensureHookToken, HookTokenError } from '../transport/hook-token.js';
import { ensureSecretFile, SecretFileError } from '../transport/secret-file.js';
import { DeliveryLedger } from '../transport/webhook/delivery-ledger.js';
import { WebhookStats, type WebhookDeps } from './webhook-route.js';
import { WEBHOOK_LEDGER_FILE, type DaemonConfig } from '../config/config.js';
import { openListeners } from '../transport/listeners.js';
import { portRule, probeListeners } from '../transport/listen-probe.js';
import { prepareSocketPath, SocketInUseError } from '../transport/unix-socket.js';
import { RelayLink } from '../relay/relay-link.js';
import { captureRank } from '../core/capture-levels.js';
import type { Degradation } from '../core/health-latch.js';
import { wireStream, type StreamFactories, type StreamWiring } from './stream-wiring.js';
import { streamFactories } from './stream-factories.js';
import { ControlTarget } from '../control/control-target.js';
import { daemonReadings } from './metrics-readings.js';
import { IdleClose } from './idle-close.js';
import { StreamAuth } from '../stream/stream-auth.js';
import { uiFolder } from '../ui-server/static-files.js';
import type { UiDeps } from '../ui-server/deps.js';

export const VERSION = '0.1.0';
/** what the log sink's final writes and fdatasync may take at shutdown (the whole stop is bounded by the sum below) */
const LOG_FLUSH_MS = 10_000;
const SHUTDOWN_MARGIN_MS = 2_000;
/** requests in flight at SIGTERM get this long to be answered */
const LISTEN_GRACE_MS = 3_000;

/**
 * The hook transport's preconditions: the socket path free (a stale socket
 * from a dead daemon removed; a live daemon's kept, and this start refused),
 * and, with TCP on, the token every TCP hook must carry (created if missing).
 */
async function prepareTransport(config: DaemonConfig, log: Logger): Promise<{ guard: RequestGuard; hookToken?: string; webhookSecret?: string }> {
  try {
    if (config.socket) {
      const prepared = await prepareSocketPath(config.socket);
      if (prepared.removedStale) log.info('removed a stale hook socket (no daemon answered on it)', { socket: config.socket });
      if (prepared.dirExposed) log.warn('the hook socket directory is writable by other users; keep it private (0700)', { socket: config.socket });
    }
    let token: string | undefined;
    if (config.port !== undefined) {
      const t = await ensureHookToken(config.tokenFile);
      if (t.created) log.info('created the hook token file', { file: config.tokenFile });
      if (t.exposed) log.warn('the hook token file is readable by other users; chmod 600 it', { file: config.tokenFile });
      token = t.token;
    }
    // Hermes's outbound webhooks reach the daemon over TCP only: their secret is made (or read) with TCP on
    const webhookSecret = config.port !== undefined ? await readWebhookSecret(config.webhook.secretFile, log) : undefined;
    return {
      guard: new RequestGuard({ boundHost: config.host, allowedHosts: config.allowedHosts, ...(token ? { token } : {}), ui: config.ui.on }),
      ...(token ? { hookToken: token } : {}),
      ...(webhookSecret ? { webhookSecret } : {}),
    };
  } catch (err) {
    if (err instanceof SocketInUseError) throw new ConfigError([{ variable: 'AEP_SOCKET', rule: err.message }]);
    if (err instanceof HookTokenError) throw new ConfigError([{ variable: 'AEP_TOKEN_FILE', rule: err.message }]);
    if (err instanceof SecretFileError) throw new ConfigError([{ variable: 'AEP_STATE_DIR', rule: err.message }]);
    throw err;
  }
}

/** `{stateDir}/webhook-secret`, created when missing (the same code as the hook token's); its path is logged, never its content. */
async function readWebhookSecret(file: string, log: Logger): Promise<string> {
  const s = await ensureSecretFile(file, 'the webhook secret');
  if (s.created) log.info('created the webhook secret file', { file });
  if (s.exposed) log.warn('the webhook secret file is readable by other users; chmod 600 it', { file });
  return s.secret;
}
/** the final snapshot: capture, find the logs' ends, write and fsync (well under a second at 10,000 sessions) */
const SNAPSHOT_SAVE_MS = 5_000;

export interface RunningDaemon {
  /** how long a graceful stop may take: the mirror's flush, the log's, a margin */
  readonly shutdownBudgetMs: number;
  /** the TCP listener (`http://host:port`), only when AEP_PORT is set */
  readonly url?: string;
  /** the Unix socket path, unless AEP_SOCKET=off */
  readonly socket?: string;
  readonly epoch: number;
  readonly bus: EventBus;
  /** the hook path behind POST /hook (the memory benchmark drives it in process) */
  readonly pipeline: HookPipeline;
  /** the native AEP stream (hub, ingest), when its parts are wired */
  readonly stream?: StreamWiring;
  close(): Promise<void>;
}

/** Wire the daemon from its settings and start listening. */
export async function startDaemon(
  { config, otel, logs, prices, metrics: metricsConfig }: Settings,
  log: Logger,
  factories: StreamFactories | undefined = streamFactories,
): Promise<RunningDaemon> {
  // Before anything at all is written: the listeners are free (a busy port or a live daemon's socket refuses the start here).
  const busy = await probeListeners({
    ...(config.socket ? { socket: config.socket } : {}),
    host: config.host,
    ...(config.port !== undefined ? { port: config.port } : {}),
  });
  if (busy.length > 0) throw new ConfigError(busy);
  // Before anything is written: every directory the daemon writes in is its user's alone (else the start stops here).
  await ensurePrivateDirs(config);
  // Before anything touches the state: a daemon already answering on this socket keeps it.
  const transport = await prepareTransport(config, log);
  // the delivery ids accepted within the window, read back so a replay after a restart is still answered, not processed
  const webhook = transport.webhookSecret !== undefined ? await webhookDeps(config, transport.webhookSecret) : undefined;
  // the state dir's epoch (a corrupt file refuses the start here); the new one is settled once the history is read back
  const storedEpoch = await readStoredEpoch(config.stateDir);
  const ended = new EndedSessions(config.stateDir);
  await ended.load();
  const ulid = monotonicFactory(bufferedPrng());
  const identity = new IdentityStage({
    ended,
    epoch: storedEpoch + 1,
    host: config.sourceHost,
    policy: config.policy,
    newId: () => ulid(),
    maxSessions: config.maxSessions,
  });
  const exporter = await createExporter(otel);
  const mirror = exporter ? new OtelMirror({ config: otel, exporter, sampler: createSampler(otel.sampler), version: VERSION, log }) : undefined;
  // the AEP log bridge: every live event as an OTLP LogRecord (OTEL_LOGS_EXPORTER; off without an OTLP endpoint)
  const logSink =
    logs?.exporter === 'otlp'
      ? new AepLogSink({
          config: logs,
          exporter: new DeferredLogExporter(() => otlpLogExporter(logs.protocol)),
          agent: config.policy.agent,
          version: VERSION,
          log,
        })
      : undefined;
  // the metrics signal (OTEL_METRICS_EXPORTER): a sink on the bus, its SDK loaded once the daemon listens
  const exportFailures = new ExportFailures();
  if (mirror) exportFailures.register('traces', () => mirror.exportFailures);
  const metrics =
    metricsConfig && metricsConfig.exporter !== 'none' ? new MetricsSink({ config: metricsConfig, version: VERSION, exportFailures, log }) : undefined;
  if (logSink) exportFailures.register('logs', () => logSink.exportFailures);
  // --- start-up state (snapshot helper) ---
  // Rebuild what a previous process held in memory, before the first hook is
  // accepted (pairing state and open spans): from {stateDir}/snapshot plus
  // the log bytes past it, or, without a usable snapshot, from the recent logs.
  const history = new JsonlHistorySink(config.historyDir, config.historyQueueMax, { fsyncIntervalMs: config.fsyncIntervalMs, log });
  // spool files whose events are already in the log: a previous process died between writing and deleting them
  const spooledSeen = new Set<string>();
  const snapshot = new Snapshotter({
    stateDir: config.stateDir,
    historyDir: config.historyDir,
    windowMs: config.replayWindowMs,
    intervalMs: config.snapshotIntervalMs,
    daemonVersion: VERSION,
    identity,
    ...(mirror ? { mirror } : {}),
    drained: () => history.flush(),
    inFlight: () => late.bus?.inFlight() ?? [],
    replayed: (ev) => {
      if (typeof ev.hermesspool === 'string') spooledSeen.add(ev.hermesspool);
      // the log read back: pairing state for the metrics' durations, never measured again
      metrics?.remember(ev);
    },
    // bound once the hook app exists (below): the spool is created with it
    // and live hooks held after a failed write whose events landed carrying their key, their spooled copy not yet dropped
    spoolKeys: () => [...(late.spool?.publishedNotDeleted() ?? []), ...(late.pipeline?.retainedKeys.landedKeys() ?? [])],
    log,
  });
  // known only once the hook app (its spool) and the listeners (the TCP URL) exist; read by closures made before
  const late: { spool?: SpoolIngest; pipeline?: HookPipeline; bus?: EventBus; tcpUrl?: string; idle?: IdleClose } = {};
  const restored = snapshot.restore();
  // the own events the stream's buffer rebuild reads back may reach further back than the restore's window
  const historyEpochs = new HighestEpoch();
  for (const key of restored.spoolKeys) spooledSeen.add(key);
  const r = restored.replay;
  log.info('state rebuilt', {
    from: restored.from,
    ...(restored.fallback ? { fallback: restored.fallback } : {}),
    ms: restored.ms,
    // since the process started: what a restart costs before the daemon listens
    process_ms: Math.round(performance.now()),
    lanes: restored.lanes,
    files: r.files,
    events: r.events,
    skipped: r.skippedLines,
  });
  // --- end start-up state ---
  if (mirror) {
    mirror.start();
    log.info('opentelemetry mirror on', { exporter: otel.exporter, ...(otel.exporter === 'file' ? { file: otel.file } : {}) });
  }
  if (logSink && logs) {
    logSink.start();
    log.info('aep log bridge on', { protocol: logs.protocol, capture: logs.ceiling });
  }
  const recorder = config.recordDir ? new EnvelopeRecorder(config.recordDir) : undefined;
  if (recorder) log.warn('recording raw hermes envelopes (content-bearing) because AEP_RECORD_DIR is set', { dir: config.recordDir });
  // an unwritable or full log dir shows (degraded, one stderr line, hooks refused) from the start
  await history.start();
  // the control target of the own sessions: observe-only (accepts nothing, nacks every command) unless a gate is on
  const control = new ControlTarget({ settings: config.control, policy: config.policy, log });
  if (control.on) log.info('control gates on', { gate: config.control.gate, instruct: config.control.instruct, hold_ms: config.control.holdMs });
  // the replay buffer refilled from the history (all agents) before anyone can subscribe
  const stream = factories
    ? await wireStream({
        config,
        guard: transport.guard,
        ...(transport.hookToken !== undefined ? { readToken: transport.hookToken } : {}),
        ...(mirror ? { mirror } : {}),
        factories,
        log,
        ownFiles: snapshot.listed,
        control,
        readBack: (w) => historyEpochs.see(w.epoch),
      })
    : undefined;
  if (stream) log.info('stream buffer rebuilt', { ...stream.rebuilt });
  // The epoch, before anything is emitted: past the state dir's AND every epoch the history read back shows,
  // so a lost or replaced state dir never brings an old epoch (and its session:epoch:seq positions) back
  historyEpochs.see(restored.highestEpoch);
  const epochStart = await commitEpoch(config.stateDir, storedEpoch, historyEpochs.value);
  if (epochStart.behind)
    log.warn("the state dir's epoch was behind the history; the new epoch is past the history's", {
      stored: epochStart.stored,
      history: epochStart.history,
      epoch: epochStart.epoch,
    });
  const epoch = epochStart.epoch;
  identity.enterEpoch(epoch);
  // AEP_RELAY_URL: this daemon's own events, once durable, also go out to a relay as an emitter
  const relay = stream && config.relay ? relayLink(config, log, control, (s) => stream.hub.isOwnSession(s)) : undefined;
  // AEP_UI: the live view, over the stream's hub and the control target
  const ui = stream && config.ui.on ? liveView(config, stream, control, transport.hookToken, log) : undefined;
  const started = Date.now();
  const dropReports = new DropReports();
  // model-call cost: the price database (~830 KB) loads once the daemon listens; a call priced before then has none (counted)
  const pricer = createPricer(prices ? { overrides: prices } : {});
  const { app, bus, pipeline, spool } = createHookApp({
    policy: config.policy,
    identity,
    // the mirror's span context stage stamps traceparent before the bus (mirror off: no stamping); no span leaves there
    ...(mirror ? { stamp: new SpanContextStage(mirror) } : {}),
    // the history holds each reply; then, once it holds the events: spans, logs, snapshot, metrics, the stream hub, the relay
    durable: [history],
    consumers: [
      ...(mirror ? [mirror] : []),
      ...(logSink ? [logSink] : []),
      snapshot,
      ...(metrics ? [metrics] : []),
      ...(stream ? [stream.own] : []),
      ...(relay ? [wireConsumer('relay', (ws) => relay.offer(ws))] : []),
    ],
    log,
    maxBodyBytes: config.maxBodyBytes,
    maxBodyNodes: config.maxBodyNodes,
    guard: transport.guard,
    dropReports,
    ...(recorder ? { recorder } : {}),
    health: () => ({
      version: VERSION,
      epoch,
      uptime_s: Math.round((Date.now() - started) / 1000),
      control: config.control.gate,
      capture: { ceiling: config.policy.ceiling, ...config.policy.categories },
      transport: {
        socket: config.socket ?? null,
        tcp: late.tcpUrl ?? null,
        ...transport.guard.stats(),
        plugin: dropReports.stats(),
        ...(webhook ? { webhook: webhookHealth(webhook) } : {}),
      },
      snapshot: snapshot.healthz(),
      ...(stream ? { stream: stream.healthz() } : {}),
      ...(relay ? { relay: relay.stats() } : {}),
      cost: pricer.stats(),
      ...(late.idle ? { idle_close: late.idle.stats() } : {}),
      logs: logSink?.stats() ?? { exporter: 'none' },
      ...(metrics ? { metrics: metrics.stats() } : {}),
    }),
    spool: { dir: path.join(config.stateDir, 'spool'), seen: spooledSeen },
    ...(stream || webhook ? { server: { ...stream?.server, ...(webhook ? { webhook } : {}), ...(ui ? { ui } : {}) } } : {}),
    ...(stream ? { degraded: () => [...stream.degraded(), ...degradedOf(relay)] } : {}),
    // a recorded ack re-emitted: to the hub, then the relay, as the own events go
    control: {
      target: control,
      settings: config.control,
      republish: (w) => {
        stream?.republish(w);
        relay?.offer([w]);
      },
    },
    pricer,
  });
  // gate cards a previous process died holding: closed now (their hooks were answered by the transports' fail-open)
  const orphans = control.closeOrphans(epoch);
  if (orphans > 0) log.info('closed gate cards a previous process left pending', { cards: orphans });
  // AEP_SESSION_IDLE_S: sessions Hermes never finalizes (`hermes -z`, a killed Hermes) are ended after that much silence
  const idle = new IdleClose({
    idleMs: config.sessionIdleMs,
    idleSessions: (cutoff, waitCutoff, max) => identity.idleSessions(cutoff, waitCutoff, max),
    held: (session) => control.holds(session),
    end: (session) => pipeline.endIdle(session),
    log,
  });
  late.idle = idle;
  late.spool = spool;
  late.pipeline = pipeline;
  late.bus = bus;
  if (metrics) metrics.readings = daemonReadings({ history, mirror, spool: () => late.spool, dropReports, stream, relay, pipeline });
  // fastify's own server stays unbound: the listeners feed its router, tagging each request's transport
  await app.ready();
  const listening = await openListeners(
    (req, res) => app.routing(req, res),
    {
      ...(config.socket ? { socket: config.socket } : {}),
      ...(config.port !== undefined ? { tcp: { host: config.host, port: config.port } } : {}),
    },
    stream?.upgrade,
  ).catch(async (err: unknown) => {
    await app.close();
    await stream?.close('daemon failed to start');
    await bus.shutdown();
    // taken since the probe (a race): still said in the bad-settings format
    const e = err as NodeJS.ErrnoException & { port?: unknown };
    const taken = config.port !== undefined && typeof e.port === 'number' ? portRule(e.code, config.host, config.port) : undefined;
    throw taken !== undefined ? new ConfigError([taken]) : err;
  });
  const { url, socket } = listening;
  late.tcpUrl = url;
  // Hooks are answered 503 (and spooled by the shim) until the spool is drained; only then is the daemon
  // ready for them, and says so. Not awaited: a SIGTERM during a long drain still stops it cleanly.
  const ready = () =>
    log.info('hermes-aep daemon listening', { ...(socket ? { socket } : {}), ...(url ? { url } : {}), epoch, capture: config.policy.ceiling });
  // the price database first (~0.1 s): the spooled hooks, model calls among them, are then priced like live ones
  const priced = pricer.load().then(
    () => undefined,
    (err: unknown) => log.warn('the price database did not load: model calls carry no cost (counted in /healthz cost)', { error: (err as Error).name }),
  );
  // the idle close once the spool is drained: a session whose hooks waited there is not silent
  if (spool)
    void priced
      .then(() => spool.start())
      .then(() => {
        if (!spool.draining) ready();
        idle.start();
      });
  else
    void priced.then(() => {
      ready();
      idle.start();
    });
  snapshot.start();
  relay?.start();
  if (metrics) {
    void metrics.start();
    log.info('metrics on', { exporter: metricsConfig?.exporter, interval_ms: metricsConfig?.intervalMs });
  }
  let closing: Promise<void> | undefined;
  return {
    shutdownBudgetMs:
      Math.max(exporter ? otel.shutdownTimeoutMs : 0, logSink && logs ? logs.shutdownTimeoutMs : 0) +
      (metrics ? METRICS_SHUTDOWN_MS : 0) +
      LISTEN_GRACE_MS +
      LOG_FLUSH_MS +
      SHUTDOWN_MARGIN_MS +
      SNAPSHOT_SAVE_MS,
    ...(url ? { url } : {}),
    ...(socket ? { socket } : {}),
    epoch,
    bus,
    pipeline,
    ...(stream ? { stream } : {}),
    close: () =>
      (closing ??= (async () => {
        idle.stop();
        // held hooks first: each is answered {} (its card dismissed) rather than left to wait on a stopping daemon
        control.releaseAll();
        // subscribers first: an open SSE response or WebSocket would hold the listeners' grace
        await stream?.closeClients('daemon stopping');
        // the spool first: stop after the file in hand, so closing never waits on a drain
        await Promise.all([
          spool?.close(),
          (async () => {
            await listening.close(LISTEN_GRACE_MS);
            await app.close();
          })(),
        ]);
        await recorder?.flush();
        await relay?.close();
        await stream?.close('daemon stopping');
        await bus.shutdown();
        // the log is flushed and nothing else arrives: the snapshot the next start reads
        await snapshot.close();
        await ended.flush();
        await webhook?.ledger.close();
      })()),
  };
}

/** `POST /webhook`'s parts: the secret, the window, the delivery ledger (read back from the state dir), the counters. */
async function webhookDeps(config: DaemonConfig, secret: string): Promise<WebhookDeps> {
  const ledger = new DeliveryLedger({ file: path.join(config.stateDir, WEBHOOK_LEDGER_FILE), windowMs: config.webhook.windowMs });
  await ledger.load();
  return { secret, windowMs: config.webhook.windowMs, ledger, stats: new WebhookStats() };
}

/** /healthz `transport.webhook`: what the daemon saw of Hermes's deliveries (never the secret). */
function webhookHealth(w: WebhookDeps): Record<string, number> {
  return { ...w.stats, dedupe_kept: w.ledger.size, dedupe_evicted: w.ledger.evicted, dedupe_write_failures: w.ledger.writeFailures };
}

/** The relay link of AEP_RELAY_URL, declaring capture up to the highest level any category may carry. */
function relayLink(config: DaemonConfig, log: Logger, control: ControlTarget, isOwnSession: (s: string) => boolean): RelayLink | undefined {
  if (!config.relay) return undefined;
  const levels = [config.policy.ceiling, ...Object.values(config.policy.categories)];
  const ceiling = levels.reduce((a, b) => (captureRank(b) > captureRank(a) ? b : a));
  return new RelayLink({
    url: config.relay.url,
    ...(config.stream.token !== undefined ? { token: config.stream.token } : {}),
    outbox: config.relay.outbox,
    instance: config.sourceHost,
    ceiling,
    heartbeatMs: config.stream.heartbeatMs,
    control,
    isOwnSession,
    log,
  });
}

/** The live view's parts: its files, the stream's read rule (its own instance: it keeps no counts), AEP_TOKEN for answers. */
function liveView(config: DaemonConfig, stream: StreamWiring, control: ControlTarget, hookToken: string | undefined, log: Logger): UiDeps {
  const token = config.stream.token;
  return {
    dir: uiFolder(),
    version: VERSION,
    jaegerUrl: config.ui.jaegerUrl,
    gates: { control: config.control.gate, instruct: config.control.instruct },
    ...(token !== undefined ? { token } : {}),
    auth: new StreamAuth({
      ...(token !== undefined ? { token } : {}),
      ...(hookToken !== undefined ? { readToken: hookToken } : {}),
      openRead: config.stream.openRead,
      allowedOrigins: [],
    }),
    hub: stream.hub,
    control,
    sourceHost: config.sourceHost,
    log,
  };
}

const degradedOf = (relay: RelayLink | undefined): Degradation[] => {
  const d = relay?.health();
  return d ? [d] : [];
};

/** `hermes-aep daemon`: start, and stop cleanly on SIGTERM/SIGINT with a bounded flush. */
export async function main(): Promise<void> {
  let log = createDiagnostics(false);
  let daemon: RunningDaemon;
  let settings: Settings | undefined;
  try {
    settings = await loadSettings();
    log = createDiagnostics(settings.config.debug);
    const old = runtimeWarning(process.versions.node);
    if (old) log.warn(old);
    daemon = await startDaemon(settings, log);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    log.error(err.message, { variables: err.variables.join(',') });
    const port = settings?.config.port;
    // a port that cannot be bound cannot serve the refusal either
    const portRefused = err.variables.includes('AEP_PORT') || err.variables.includes('AEP_HOST');
    if (settings?.config.serveRefusal && port !== undefined && !portRefused) return stayRefused({ ...settings.config, port }, err, log);
    // now, not when the loop drains: a file system that did not answer may still hold a request open
    process.exit(2);
  }
  const stop = (signal: string) => {
    log.info('shutting down', { signal });
    const timer = setTimeout(() => {
      log.warn('shutdown timed out; exiting');
      process.exit(1);
    }, daemon.shutdownBudgetMs);
    timer.unref();
    void daemon.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

/** AEP_START_REFUSED=serve: keep the TCP port answering 503 with why, until stopped; then exit 2, as a refused start does. */
async function stayRefused(config: DaemonConfig & { port: number }, refusal: ConfigError, log: Logger): Promise<void> {
  const refused = await serveRefusal(config, refusal, log).catch((err: unknown) => {
    log.error('could not serve the refusal', { error: err instanceof Error ? err.message : String(err) });
    process.exit(2);
  });
  const stop = () => void refused.close().finally(() => process.exit(2));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
