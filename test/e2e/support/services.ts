import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';
import { freePorts } from '../../support/ports.js';
import { decodeResourceSpans, type DecodedSpan } from '../../support/otlp-json.js';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

/**
 * The real OpenTelemetry Collector and Jaeger v2 binaries (provisioned by
 * scripts/provision-otel.sh, published by the e2e globalSetup as
 * E2E_OTELCOL / E2E_JAEGER / E2E_PROMETHEUS), started on free loopback ports through the env
 * overrides their configs expose, plus a minimal Jaeger query client.
 *
 * Every started process is registered: `stopAllServices()` (call it from an
 * `afterAll`) stops whatever is still running, on success and on failure, and
 * a process `exit` hook SIGKILLs anything left if the worker dies first.
 */

const LOOPBACK = '127.0.0.1';
const START_DEADLINE_MS = 30_000;
const STOP_DEADLINE_MS = 10_000;
const MAX_LOG_CHARS = 256 * 1024;

export interface ServiceProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** the tail of everything the process wrote to stderr and stdout */
  output(): string;
  /**
   * SIGTERM, SIGKILL after a deadline; resolves once the process has exited,
   * with how: "exit code 0, signal null", "... (SIGKILL after the stop deadline)"
   */
  stop(): Promise<string>;
  /** SIGKILL at once (a crash); resolves once the process has exited, with how */
  kill(): Promise<string>;
}

const running = new Set<ServiceProcess>();
let exitHookInstalled = false;

function killAllNow(): void {
  for (const svc of running) {
    if (svc.child.exitCode === null && svc.child.signalCode === null) svc.child.kill('SIGKILL');
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers must be synchronous: a kill is, waiting is not possible here
  process.once('exit', killAllNow);
  // vitest's forks pool ends its workers with SIGTERM, which skips 'exit' handlers:
  // kill the services, then let the signal take its default course again
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    const onSignal = () => {
      killAllNow();
      process.off(sig, onSignal);
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
}

/** Stop every registered service still running (collectors before Jaeger, i.e. newest first). */
export async function stopAllServices(): Promise<void> {
  const all = [...running].reverse();
  const results = await Promise.allSettled(all.map((s) => s.stop()));
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed.length > 0) throw new Error(`stopping services failed: ${failed.map((f) => String(f.reason)).join('; ')}`);
}

function binary(envName: 'E2E_OTELCOL' | 'E2E_JAEGER' | 'E2E_PROMETHEUS'): string {
  const bin = process.env[envName];
  if (!bin) throw new Error(`${envName} is not set: run through the vitest "e2e" project (its globalSetup provisions the binaries)`);
  return bin;
}

/** The environment a service inherits: this process's, minus OTEL_* (Jaeger would trace itself to them) and our own knobs. */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(OTEL_|OTELCOL_|JAEGER_)/.test(k)) env[k] = v;
  }
  return env;
}

function spawnService(name: string, bin: string, args: string[], env: Record<string, string>): { svc: ServiceProcess; exited: Promise<string> } {
  installExitHook();
  const child = spawn(bin, args, { cwd: ROOT, env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const append = (c: Buffer) => {
    log += c.toString('utf8');
    if (log.length > MAX_LOG_CHARS) log = log.slice(-MAX_LOG_CHARS);
  };
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const exited = new Promise<string>((resolve) => {
    child.once('error', (err) => resolve(`spawn error: ${err.message}`));
    child.once('exit', (code, signal) => resolve(`exit code ${code}, signal ${signal}`));
  });
  const svc: ServiceProcess = {
    name,
    child,
    output: () => log,
    stop: async () => {
      let how: string;
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const deadline = new Promise<'deadline'>((r) => (timer = setTimeout(() => r('deadline'), STOP_DEADLINE_MS)));
        const first = await Promise.race([exited, deadline]);
        clearTimeout(timer);
        if (first === 'deadline') {
          child.kill('SIGKILL');
          how = `${await exited} (SIGKILL after the stop deadline)`;
        } else {
          how = first;
        }
      } else {
        how = await exited;
      }
      running.delete(svc);
      return how;
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) child.kill('SIGKILL');
      const how = await exited;
      running.delete(svc);
      return how;
    },
  };
  running.add(svc);
  void exited.then(() => running.delete(svc));
  return { svc, exited };
}

/** Poll `url` until it answers 200, racing the process's exit; errors carry the process output. */
async function waitHealthy(svc: ServiceProcess, exited: Promise<string>, url: string): Promise<void> {
  const deadline = Date.now() + START_DEADLINE_MS;
  let gone: string | undefined;
  void exited.then((how) => (gone = how));
  let last: string;
  for (;;) {
    if (gone !== undefined) throw new Error(`${svc.name} exited before it was healthy (${gone}); output:\n${svc.output()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) {
      await svc.stop();
      throw new Error(`${svc.name} not healthy at ${url} after ${START_DEADLINE_MS} ms (${last}); output:\n${svc.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Start, and on a lost port race (another process grabbed a port first) try again with fresh ports. */
async function startWithRetry<T>(name: string, attempt: () => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      if (i >= 3 || !/address already in use/i.test((err as Error).message)) throw err;
      console.warn(`[e2e] ${name}: port taken between probe and bind, retrying with new ports`);
    }
  }
}

export interface JaegerService extends ServiceProcess {
  readonly ports: { otlpGrpc: number; otlpHttp: number; queryHttp: number; queryGrpc: number; health: number };
  /** the query HTTP base URL (APIs and UI route) */
  readonly queryUrl: string;
  readonly query: JaegerQuery;
}

/** The config startJaeger runs unless told otherwise: in-memory storage. */
export const JAEGER_TEST_CONFIG = path.join(ROOT, 'test', 'e2e', 'jaeger-config.yaml');
/** The config docker-compose.yml runs (Badger storage, env-overridable); the restart test runs it unchanged. */
export const JAEGER_COMPOSE_CONFIG = path.join(ROOT, 'deploy', 'jaeger', 'jaeger.yaml');

/**
 * Jaeger v2 all-in-one with `opts.config` (default test/e2e/jaeger-config.yaml,
 * in-memory storage), every listener on a free loopback port, or on
 * `opts.ports` (e.g. a previous instance's, to restart "the same" Jaeger).
 */
export function startJaeger(env: Record<string, string> = {}, opts: { config?: string; ports?: JaegerService['ports'] } = {}): Promise<JaegerService> {
  return startWithRetry('jaeger', async () => {
    const [otlpGrpc, otlpHttp, queryHttp, queryGrpc, health] = opts.ports
      ? [opts.ports.otlpGrpc, opts.ports.otlpHttp, opts.ports.queryHttp, opts.ports.queryGrpc, opts.ports.health]
      : ((await freePorts(5)) as [number, number, number, number, number]);
    const { svc, exited } = spawnService('jaeger', binary('E2E_JAEGER'), ['--config', `file:${opts.config ?? JAEGER_TEST_CONFIG}`], {
      JAEGER_LISTEN_HOST: LOOPBACK,
      JAEGER_OTLP_GRPC_PORT: String(otlpGrpc),
      JAEGER_OTLP_HTTP_PORT: String(otlpHttp),
      JAEGER_QUERY_HTTP_PORT: String(queryHttp),
      JAEGER_QUERY_GRPC_PORT: String(queryGrpc),
      JAEGER_HEALTH_PORT: String(health),
      JAEGER_METRICS_LEVEL: 'none',
      JAEGER_QUERY_ENABLE_TRACING: 'false',
      ...env,
    });
    await waitHealthy(svc, exited, `http://${LOOPBACK}:${health}/status`);
    const queryUrl = `http://${LOOPBACK}:${queryHttp}`;
    return Object.assign(svc, { ports: { otlpGrpc, otlpHttp, queryHttp, queryGrpc, health }, queryUrl, query: new JaegerQuery(queryUrl) });
  });
}

export interface CollectorService extends ServiceProcess {
  readonly ports: { otlpHttp: number; otlpGrpc: number; health: number; metrics?: number; prometheus: number };
  /** the metrics pipeline's scrape endpoint, host:port (its prometheus exporter serves /metrics there) */
  readonly prometheusTarget: string;
  /** with `logsFile`: the OTLP/JSON lines file the logs pipeline writes (test/e2e/otel-logs-file.yaml) */
  readonly logsFile?: string;
  /** base URL for OTEL_EXPORTER_OTLP_ENDPOINT with an http/* protocol (the exporter appends /v1/traces) */
  readonly otlpHttpUrl: string;
  /** OTEL_EXPORTER_OTLP_ENDPOINT with OTEL_EXPORTER_OTLP_PROTOCOL=grpc (host and port; http:// is plaintext) */
  readonly otlpGrpcUrl: string;
  /** `host:port` of the OTLP/gRPC receiver, as another collector's exporter endpoint names it */
  readonly otlpGrpcAddress: string;
  /** the collector's own Prometheus metrics (text format); only when started with `metrics: true` */
  metrics(): Promise<string>;
}

export interface CollectorOptions {
  /** the Jaeger the root otel-collector.yaml exports to (OTELCOL_JAEGER_ENDPOINT); other configs ignore it */
  jaegerGrpcPort?: number;
  /** the config to run, relative to the repository root (default: otel-collector.yaml) */
  config?: string;
  /** a label for errors and logs (default: otelcol) */
  name?: string;
  /** serve the collector's own metrics on a free loopback port (OTELCOL_METRICS_*), read with `metrics()` */
  metrics?: boolean;
  /** also route the logs pipeline to a temp OTLP/JSON file (the e2e overlay test/e2e/otel-logs-file.yaml) */
  logsFile?: boolean;
  env?: Record<string, string>;
}

/**
 * The collector built from otel/builder-config.yaml running one of the
 * project's configs unchanged (by default the root otel-collector.yaml; the
 * fleet tier's deploy/fleet/*.yaml share its env names): only its documented
 * env overrides are set. The replay glob defaults to an empty temp directory
 * so nothing on the host is replayed by accident. The metrics pipeline's
 * scrape endpoint always gets a free port too. With `logsFile: true` the e2e
 * overlay test/e2e/otel-logs-file.yaml is loaded as a second --config and the
 * logs pipeline also writes every LogRecord to a temp file (`logsFile`).
 */
export function startCollector(opts: CollectorOptions = {}): Promise<CollectorService> {
  const name = opts.name ?? 'otelcol';
  return startWithRetry(name, async () => {
    const [otlpHttp, otlpGrpc, health, metricsPort, prometheus] = (await freePorts(5)) as [number, number, number, number, number];
    const emptyReplay = path.join(tempDir('hermes-aep-replay-'), 'none');
    mkdirSync(emptyReplay);
    const logsFile = opts.logsFile ? path.join(tempDir('hermes-aep-otelcol-logs-'), 'logs.jsonl') : undefined;
    const args = ['--config', path.join(ROOT, opts.config ?? 'otel-collector.yaml')];
    if (logsFile) args.push('--config', path.join(ROOT, 'test', 'e2e', 'otel-logs-file.yaml'));
    const { svc, exited } = spawnService(name, binary('E2E_OTELCOL'), args, {
      OTELCOL_OTLP_HTTP_ENDPOINT: `${LOOPBACK}:${otlpHttp}`,
      OTELCOL_OTLP_GRPC_ENDPOINT: `${LOOPBACK}:${otlpGrpc}`,
      OTELCOL_HEALTH_ENDPOINT: `${LOOPBACK}:${health}`,
      ...(opts.jaegerGrpcPort !== undefined ? { OTELCOL_JAEGER_ENDPOINT: `${LOOPBACK}:${opts.jaegerGrpcPort}` } : {}),
      OTELCOL_PROMETHEUS_ENDPOINT: `${LOOPBACK}:${prometheus}`,
      ...(logsFile ? { OTELCOL_LOGS_FILE: logsFile } : {}),
      ...(opts.metrics
        ? { OTELCOL_METRICS_LEVEL: 'normal', OTELCOL_METRICS_HOST: LOOPBACK, OTELCOL_METRICS_PORT: String(metricsPort) }
        : { OTELCOL_METRICS_LEVEL: 'none' }),
      OTELCOL_REPLAY_GLOB: path.join(emptyReplay, '*.jsonl'),
      ...opts.env,
    });
    await waitHealthy(svc, exited, `http://${LOOPBACK}:${health}/`);
    return Object.assign(svc, {
      ports: { otlpHttp, otlpGrpc, health, prometheus, ...(opts.metrics ? { metrics: metricsPort } : {}) },
      otlpHttpUrl: `http://${LOOPBACK}:${otlpHttp}`,
      otlpGrpcUrl: `http://${LOOPBACK}:${otlpGrpc}`,
      otlpGrpcAddress: `${LOOPBACK}:${otlpGrpc}`,
      prometheusTarget: `${LOOPBACK}:${prometheus}`,
      ...(logsFile ? { logsFile } : {}),
      metrics: async () => {
        if (!opts.metrics) throw new Error(`${name} was started without metrics`);
        const res = await fetch(`http://${LOOPBACK}:${metricsPort}/metrics`, { signal: AbortSignal.timeout(5_000) });
        if (res.status !== 200) throw new Error(`${name} /metrics: HTTP ${res.status}`);
        return res.text();
      },
    });
  });
}

export interface PrometheusService extends ServiceProcess {
  readonly port: number;
  readonly url: string;
}

/**
 * The Prometheus server built from its Go module, running the shipped
 * deploy/prometheus/prometheus.yml with only its target (the compose name
 * otel-collector:8889) and intervals replaced, TSDB in a temp directory, and
 * the --enable-feature flags of docker-compose.yml's prometheus service.
 */
export function startPrometheus(opts: { target: string; scrapeInterval?: string }): Promise<PrometheusService> {
  return startWithRetry('prometheus', async () => {
    const [port] = (await freePorts(1)) as [number];
    const dir = tempDir('hermes-aep-prometheus-');
    const cfg = parseYaml(readFileSync(path.join(ROOT, 'deploy', 'prometheus', 'prometheus.yml'), 'utf8')) as {
      global: Record<string, unknown>;
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
    };
    const interval = opts.scrapeInterval ?? '500ms';
    cfg.global.scrape_interval = interval;
    cfg.global.evaluation_interval = interval;
    const job = cfg.scrape_configs.find((c) => c.job_name === 'otel-collector');
    if (!job || JSON.stringify(job.static_configs) !== JSON.stringify([{ targets: ['otel-collector:8889'] }]))
      throw new Error('deploy/prometheus/prometheus.yml: no otel-collector job scraping otel-collector:8889');
    job.static_configs = [{ targets: [opts.target] }];
    const file = path.join(dir, 'prometheus.yml');
    writeFileSync(file, stringifyYaml(cfg));
    // the feature flags the compose service runs with
    const compose = parseYaml(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: { prometheus?: { command?: string[] } } };
    const features = (compose.services.prometheus?.command ?? []).filter((a) => a.startsWith('--enable-feature='));
    const { svc, exited } = spawnService(
      'prometheus',
      binary('E2E_PROMETHEUS'),
      [`--config.file=${file}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=${LOOPBACK}:${port}`, '--log.level=warn', ...features],
      {},
    );
    const url = `http://${LOOPBACK}:${port}`;
    await waitHealthy(svc, exited, `${url}/-/ready`);
    return Object.assign(svc, { port, url });
  });
}

// ---------------------------------------------------------------------------
// Jaeger query client

/** A span from the api_v3 (OTLP-JSON) search, attributes decoded to plain values. */
export type FoundSpan = DecodedSpan;

export interface FoundTrace {
  traceId: string;
  spans: FoundSpan[];
}

/** The legacy `/api/traces/{id}` shapes, only the fields tests read. */
export interface LegacyTag {
  key: string;
  type: string;
  value: unknown;
}
export interface LegacyReference {
  refType: 'CHILD_OF' | 'FOLLOWS_FROM';
  traceID: string;
  spanID: string;
}
export interface LegacySpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: LegacyReference[];
  tags: LegacyTag[];
  logs: { timestamp: number; fields: LegacyTag[] }[];
  processID: string;
  /** microseconds */
  startTime: number;
  duration: number;
}
export interface LegacyTrace {
  traceID: string;
  spans: LegacySpan[];
  processes: Record<string, { serviceName: string; tags: LegacyTag[] }>;
}

export function tag(span: LegacySpan, key: string): unknown {
  return span.tags.find((t) => t.key === key)?.value;
}

export class JaegerQuery {
  /** every response body this client received, for byte-level content checks */
  readonly bodies: string[] = [];

  constructor(readonly baseUrl: string) {}

  /** GET any query-API path; the body is recorded like every other response. */
  async raw(pathAndQuery: string): Promise<{ status: number; body: string }> {
    const res = await fetch(`${this.baseUrl}${pathAndQuery}`, { signal: AbortSignal.timeout(10_000) });
    const body = await res.text();
    this.bodies.push(body);
    return { status: res.status, body };
  }

  async services(): Promise<string[]> {
    const { status, body } = await this.raw('/api/services');
    if (status !== 200) throw new Error(`GET /api/services: HTTP ${status}: ${body.slice(0, 500)}`);
    return ((JSON.parse(body) as { data?: string[] | null }).data ?? []).slice().sort();
  }

  /**
   * Traces of `service` with spans starting from `sinceMs` on (api_v3 search,
   * OTLP-JSON). Jaeger answers 404 while there is none: that is `[]` here.
   */
  async findTraces(service: string, sinceMs: number, limit = 50): Promise<FoundTrace[]> {
    const q = new URLSearchParams({
      'query.service_name': service,
      'query.start_time_min': new Date(sinceMs).toISOString(),
      'query.start_time_max': new Date(Date.now() + 3_600_000).toISOString(),
      'query.num_traces': String(limit),
    });
    const { status, body } = await this.raw(`/api/v3/traces?${q}`);
    if (status === 404) return [];
    if (status !== 200) throw new Error(`GET /api/v3/traces: HTTP ${status}: ${body.slice(0, 500)}`);
    const doc = JSON.parse(body) as { result?: { resourceSpans?: any[] } };
    const byTrace = new Map<string, FoundSpan[]>();
    for (const span of decodeResourceSpans(doc.result?.resourceSpans)) {
      const list = byTrace.get(span.traceId) ?? [];
      list.push(span);
      byTrace.set(span.traceId, list);
    }
    return [...byTrace].map(([traceId, spans]) => ({ traceId, spans }));
  }

  /** One trace through the legacy JSON API (references, tags); undefined while Jaeger does not know it. */
  async getTrace(traceId: string): Promise<LegacyTrace | undefined> {
    const { status, body } = await this.raw(`/api/traces/${traceId}`);
    if (status === 404) return undefined;
    if (status !== 200) throw new Error(`GET /api/traces/${traceId}: HTTP ${status}: ${body.slice(0, 500)}`);
    const doc = JSON.parse(body) as { data?: LegacyTrace[] | null };
    const [trace] = doc.data ?? [];
    return trace;
  }
}

/**
 * Poll `findTraces` until `until(traces)` returns a value (not undefined or
 * false); reject at the deadline with what was last seen.
 */
export async function waitForTraces<T>(
  query: JaegerQuery,
  service: string,
  sinceMs: number,
  until: (traces: FoundTrace[]) => T | undefined | false,
  opts: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const everyMs = opts.everyMs ?? 20;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = await query.findTraces(service, sinceMs);
    const v = until(seen);
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) {
      const summary = seen.map((t) => `${t.traceId}: ${t.spans.length} spans [${t.spans.map((s) => s.name).join(', ')}]`).join('; ');
      throw new Error(`timed out after ${timeoutMs} ms waiting for traces of ${service}; last seen: ${summary || 'none'}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
