import path from 'node:path';
import { monotonicFactory } from 'ulid';
import { ConfigError, loadConfig, type DaemonConfig } from '../config/config.js';
import { bumpEpoch } from '../identity/epoch-store.js';
import { IdentityStage } from '../identity/identity-stage.js';
import { EndedSessions } from '../identity/ended-sessions.js';
import { JsonlLogSink } from '../sinks/jsonl-log-sink.js';
import { createExporter, loadOtelConfig, OtelMirror, samplerFromEnv } from '../../exporters/otel/index.js';
import { stderrLogger, type Logger } from './log.js';
import { replayRecentLogs } from './log-replay.js';
import { createHookApp } from './hook-app.js';
import type { EventBus } from '../sinks/event-bus.js';
import { EnvelopeRecorder } from './envelope-recorder.js';

export const VERSION = '0.1.0';
/** the log sink's own flush deadline (sinks/jsonl-log-sink.ts), plus a margin */
const LOG_FLUSH_MS = 10_000;
const SHUTDOWN_MARGIN_MS = 2_000;

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
  // Rebuild what a previous process held in memory from the durable stream,
  // before the first hook is accepted: pairing state and open spans.
  // spool files whose events are already in the log: a previous process died between writing and deleting them
  const spooledSeen = new Set<string>();
  const replay = await replayRecentLogs(config.logDir, config.replayWindowMs, Date.now(), (ev) => {
    identity.restore(ev);
    mirror?.restore(ev);
    if (typeof ev.hermesspool === 'string') spooledSeen.add(ev.hermesspool);
  });
  if (replay.events > 0) log.info('state rebuilt from the log', { files: replay.files, events: replay.events, skipped: replay.skippedLines });
  if (mirror) {
    mirror.start();
    log.info('opentelemetry mirror on', { exporter: otel.exporter, ...(otel.exporter === 'file' ? { file: otel.file } : {}) });
  }
  const recorder = config.recordDir ? new EnvelopeRecorder(config.recordDir) : undefined;
  if (recorder) log.warn('recording raw hermes envelopes (content-bearing) because AEP_RECORD_DIR is set', { dir: config.recordDir });
  const started = Date.now();
  const logSink = new JsonlLogSink(config.logDir, config.logQueueMax);
  const { app, bus, spool } = createHookApp({
    policy: config.policy,
    identity,
    // the mirror first: it stamps traceparent before the log serializes
    sinks: [...(mirror ? [mirror] : []), logSink],
    log,
    maxBodyBytes: config.maxBodyBytes,
    ...(recorder ? { recorder } : {}),
    health: () => ({
      version: VERSION,
      epoch,
      uptime_s: Math.round((Date.now() - started) / 1000),
      control: false,
      capture: { ceiling: config.policy.ceiling, ...config.policy.categories },
    }),
    spool: { dir: path.join(config.stateDir, 'spool'), track: () => trackLog(logSink), seen: spooledSeen },
  });
  await app.listen({ host: config.host, port: config.port });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  // Hooks are answered 503 (and spooled by the shim) until the spool is drained; only then is the daemon
  // ready for them, and says so. Not awaited: a SIGTERM during a long drain still stops it cleanly.
  const ready = () => log.info('hermes-aep daemon listening', { url, epoch, capture: config.policy.ceiling });
  if (spool) void spool.start().then(() => !spool.draining && ready());
  else ready();
  let closing: Promise<void> | undefined;
  return {
    shutdownBudgetMs: (exporter ? otel.shutdownTimeoutMs : 0) + LOG_FLUSH_MS + SHUTDOWN_MARGIN_MS,
    url,
    epoch,
    bus,
    close: () =>
      (closing ??= (async () => {
        // the spool first: stop after the file in hand, so app.close() never waits on a drain
        await Promise.all([spool?.close(), app.close()]);
        await recorder?.flush();
        await bus.shutdown();
        await ended.flush();
      })()),
  };
}

/**
 * Call before publishing; the returned function resolves once everything the
 * log accepted is written, and rejects if a line was dropped or failed since
 * (a stand-in for the durability work's per-hook promise; the spool file is
 * then kept for a later pass).
 */
function trackLog(sink: JsonlLogSink): () => Promise<void> {
  const lost = () => {
    const s = sink.stats();
    return Number(s.dropped) + Number(s.errors);
  };
  const before = lost();
  return async () => {
    await sink.flush();
    if (lost() > before) throw new Error('log write failed');
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
