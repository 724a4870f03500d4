import { monotonicFactory } from 'ulid';
import { ConfigError, loadConfig, type DaemonConfig } from '../config/config.js';
import { bumpEpoch } from '../identity/epoch-store.js';
import { IdentityStage } from '../identity/identity-stage.js';
import { EndedSessions } from '../identity/ended-sessions.js';
import { JsonlLogSink } from '../sinks/jsonl-log-sink.js';
import { createExporter, loadOtelConfig, OtelMirror, samplerFromEnv } from '../../exporters/otel/index.js';
import { stderrLogger, type Logger } from './log.js';
import { Snapshotter } from '../state/snapshot.js';
import { createHookApp } from './hook-app.js';
import type { EventBus } from '../sinks/event-bus.js';
import { EnvelopeRecorder } from './envelope-recorder.js';

export const VERSION = '0.1.0';
/** the log sink's own flush deadline (sinks/jsonl-log-sink.ts), plus a margin */
const LOG_FLUSH_MS = 10_000;
const SHUTDOWN_MARGIN_MS = 2_000;
/** the final snapshot: capture, find the logs' ends, write and fsync (well under a second at 10,000 sessions) */
const SNAPSHOT_SAVE_MS = 5_000;

export interface RunningDaemon {
  /** how long a graceful stop may take: the mirror's flush, the log's, a margin */
  readonly shutdownBudgetMs: number;
  readonly url: string;
  readonly epoch: number;
  readonly bus: EventBus;
  close(): Promise<void>;
}

/** Wire the daemon from a config and start listening. */
export async function startDaemon(config: DaemonConfig, log: Logger, env: NodeJS.ProcessEnv = process.env): Promise<RunningDaemon> {
  let otel;
  try {
    otel = loadOtelConfig(config.logDir, env);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const epoch = await bumpEpoch(config.stateDir);
  const ended = new EndedSessions(config.stateDir);
  await ended.load();
  const ulid = monotonicFactory();
  const identity = new IdentityStage({
    ended,
    epoch,
    host: config.sourceHost,
    policy: config.policy,
    newId: () => ulid(),
    maxSessions: config.maxSessions,
  });
  const exporter = await createExporter(otel);
  const mirror = exporter ? new OtelMirror({ config: otel, exporter, sampler: samplerFromEnv(env), version: VERSION }) : undefined;
  // --- start-up state (snapshot helper) ---
  // Rebuild what a previous process held in memory, before the first hook is
  // accepted (pairing state and open spans): from {stateDir}/snapshot plus
  // the log bytes past it, or, without a usable snapshot, from the recent logs.
  const logSink = new JsonlLogSink(config.logDir, config.logQueueMax);
  const snapshot = new Snapshotter({
    stateDir: config.stateDir,
    logDir: config.logDir,
    windowMs: config.replayWindowMs,
    intervalMs: config.snapshotIntervalMs,
    daemonVersion: VERSION,
    epoch,
    identity,
    ...(mirror ? { mirror } : {}),
    drained: () => logSink.flush(),
    log,
  });
  const restored = snapshot.restore();
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
  const recorder = config.recordDir ? new EnvelopeRecorder(config.recordDir) : undefined;
  if (recorder) log.warn('recording raw hermes envelopes (content-bearing) because AEP_RECORD_DIR is set', { dir: config.recordDir });
  const started = Date.now();
  const { app, bus } = createHookApp({
    policy: config.policy,
    identity,
    // the mirror first: it stamps traceparent before the log serializes
    sinks: [...(mirror ? [mirror] : []), logSink, snapshot],
    log,
    maxBodyBytes: config.maxBodyBytes,
    ...(recorder ? { recorder } : {}),
    health: () => ({
      version: VERSION,
      epoch,
      uptime_s: Math.round((Date.now() - started) / 1000),
      control: false,
      capture: { ceiling: config.policy.ceiling, ...config.policy.categories },
      snapshot: snapshot.health(),
    }),
  });
  await app.listen({ host: config.host, port: config.port });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  log.info('hermes-aep daemon listening', { url, epoch, capture: config.policy.ceiling });
  snapshot.start();
  let closing: Promise<void> | undefined;
  return {
    shutdownBudgetMs: (exporter ? otel.shutdownTimeoutMs : 0) + LOG_FLUSH_MS + SHUTDOWN_MARGIN_MS + SNAPSHOT_SAVE_MS,
    url,
    epoch,
    bus,
    close: () =>
      (closing ??= (async () => {
        await app.close();
        await recorder?.flush();
        await bus.shutdown();
        // the log is flushed and nothing else arrives: the snapshot the next start reads
        await snapshot.close();
        await ended.flush();
      })()),
  };
}

/** `hermes-aep daemon`: start, and stop cleanly on SIGTERM/SIGINT with a bounded flush. */
export async function main(): Promise<void> {
  let log = stderrLogger(false);
  let daemon: RunningDaemon;
  try {
    const config = loadConfig();
    log = stderrLogger(config.debug);
    daemon = await startDaemon(config, log);
  } catch (err) {
    if (err instanceof ConfigError) {
      log.error(err.message);
      process.exitCode = 2;
      return;
    }
    throw err;
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
