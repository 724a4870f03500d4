/**
 * `hermes-aep demo`: a scripted Hermes session (no model, no network) sent
 * through the shim the build ships into the running daemon, found as `tail`
 * finds it, or into one it starts for the purpose and stops at the end; then
 * what came out: the session as `tail` shows it (read from the history file),
 * the history file and its event count, the trace's spans in the spans file
 * (or the trace id and its Jaeger link when spans go to a collector), and how
 * to see it again. Exit 0 when every expected event is in the history;
 * otherwise an Error whose message is the one-line reason.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type DaemonConfig } from '../config/config.js';
import { stylerFor } from '../tail/color.js';
import { Printer } from '../tail/printer.js';
import { streamTarget } from '../tail/target.js';
import { awaitSession, EXPECTED_TYPES, historyFileOf } from './history-check.js';
import { counter, describeAddress, probeHealth, traceExporter, type DaemonAddress } from './health-probe.js';
import { startOwnDaemon, type OwnDaemon } from './own-daemon.js';
import { demoScript } from './script.js';
import { sendHooks, SHIPPED_SHIM, type HookTarget } from './send-hooks.js';
import { awaitTrace, fileSize, type TraceSpans } from './spans-file.js';

export interface DemoCliOptions {
  readonly jaegerUrl: string;
}

/** how long the history may take to hold the whole session, and the spans file the trace */
const HISTORY_DEADLINE_MS = 15_000;
const SPANS_DEADLINE_MS = 15_000;

export function jaegerBase(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error('--jaeger-url takes an http:// or https:// URL, e.g. http://127.0.0.1:16686');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('--jaeger-url takes an http:// or https:// URL');
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

/** Where a daemon would answer, as `tail` looks for it: the socket, else TCP. */
function addressOf(config: DaemonConfig): DaemonAddress {
  const t = streamTarget({}, config);
  return t.kind === 'socket' ? { kind: 'socket', path: t.path } : { kind: 'url', origin: t.url.origin };
}

function hookTarget(a: DaemonAddress, config: DaemonConfig): HookTarget {
  return a.kind === 'socket' ? { socket: a.path } : { url: `${a.origin}/hook`, tokenFile: config.tokenFile };
}

const traceIdOf = (traceparent: unknown): string | undefined =>
  typeof traceparent === 'string' ? /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent)?.[1] : undefined;

interface Daemon {
  readonly address: DaemonAddress;
  readonly health: Record<string, unknown>;
  readonly own?: OwnDaemon;
}

async function findOrStartDaemon(config: DaemonConfig, say: (line: string) => void): Promise<Daemon> {
  const address = addressOf(config);
  const probe = await probeHealth(address);
  if (probe.kind === 'up') {
    say(`Daemon: the one running at ${describeAddress(address)}`);
    return { address, health: probe.health };
  }
  if (probe.kind === 'refused') throw new Error(`the daemon at ${describeAddress(address)} does not take hooks: ${probe.why}`);
  if (probe.kind === 'unreachable') throw new Error(`cannot reach the daemon at ${describeAddress(address)} (${probe.code})`);
  const own = await startOwnDaemon();
  say(`Daemon: none answered at ${describeAddress(address)}, so the demo started one (pid ${own.pid}, same settings); it is stopped at the end`);
  const started = await probeHealth(own.address);
  if (started.kind !== 'up') {
    await own.stop();
    throw new Error(`the daemon it started does not answer at ${describeAddress(own.address)}`);
  }
  return { address: own.address, health: started.health, own };
}

/** The trace's lines: its spans in the file, or where it went. */
async function showTrace(
  traceId: string | undefined,
  exporter: string,
  spans: { file: string; offset: number },
  jaeger: string,
  say: (line: string) => void,
  flush: () => Promise<void>,
  collectorOutcome: () => Promise<string>,
): Promise<void> {
  if (traceId === undefined || exporter === 'none') {
    say('Trace:   none (the OpenTelemetry mirror is off: OTEL_TRACES_EXPORTER=none)');
    return;
  }
  if (exporter !== 'file') {
    const sent = await collectorOutcome();
    say(`Trace:   ${traceId}: ${sent}`);
    say(`Jaeger:  ${jaeger}/trace/${traceId}`);
    return;
  }
  let found: TraceSpans = await awaitTrace(spans.file, traceId, spans.offset, SPANS_DEADLINE_MS);
  if (!found.root) {
    // a daemon the demo started writes what it holds when it stops
    await flush();
    found = await awaitTrace(spans.file, traceId, spans.offset, 0);
  }
  say(`Trace:   ${traceId}`);
  if (found.spans > 0) say(`Spans:   ${spans.file} (${found.spans} spans of this trace, OTLP/JSON)`);
  else say(`Spans:   none of this trace in ${spans.file} within ${SPANS_DEADLINE_MS / 1000} s (does the daemon write AEP_OTEL_FILE elsewhere?)`);
  say(`Jaeger:  ${jaeger}/trace/${traceId} (once a collector has the spans: compose, or scripts/local-pipeline.sh, which replays the file)`);
}

/** Whether the daemon's exports to the collector succeeded since `before` (its /healthz counters), polled until one moves or the deadline. */
async function exportOutcome(address: DaemonAddress, before: Record<string, unknown>): Promise<string> {
  const exported = counter(before, 'sinks.otel.spans_exported');
  const failed = counter(before, 'sinks.otel.spans_failed');
  const end = Date.now() + SPANS_DEADLINE_MS;
  for (;;) {
    const p = await probeHealth(address);
    if (p.kind === 'up') {
      if (counter(p.health, 'sinks.otel.spans_failed') > failed)
        return 'its export to the collector (OTEL_EXPORTER_OTLP_ENDPOINT) failed: is the collector running?';
      if (counter(p.health, 'sinks.otel.spans_exported') > exported) return 'exported to the collector (OTEL_EXPORTER_OTLP_ENDPOINT)';
    }
    if (Date.now() >= end)
      return `handed to the OTLP exporter; the collector (OTEL_EXPORTER_OTLP_ENDPOINT) had not taken it within ${SPANS_DEADLINE_MS / 1000} s`;
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function runDemo(o: DemoCliOptions, out: (line: string) => void = (l) => void process.stdout.write(`${l}\n`)): Promise<void> {
  const jaeger = jaegerBase(o.jaegerUrl);
  const config = loadConfig(process.env);
  const { loadOtelConfig } = await import('../otel/index.js');
  const spansFile = loadOtelConfig(config.historyDir, process.env).file;
  const script = demoScript();
  const historyFile = historyFileOf(config.historyDir, script.session);

  const daemon = await findOrStartDaemon(config, out);
  let stopped = false;
  const stopOwn = async () => {
    if (daemon.own === undefined || stopped) return;
    stopped = true;
    const code = await daemon.own.stop();
    out(`Stopped the daemon the demo started (pid ${daemon.own.pid}, exit ${code ?? 'by signal'})`);
  };
  const spool = mkdtempSync(path.join(os.tmpdir(), 'hermes-aep-demo-'));
  try {
    const exporter = traceExporter(daemon.health);
    const spansOffset = fileSize(spansFile);
    const refusedBefore = counter(daemon.health, 'transport.refused.token');
    const target = hookTarget(daemon.address, config);
    out(`Session: ${script.session} (scripted: no model, no network)`);
    out(`Sending: ${script.envelopes.length} hooks through ${SHIPPED_SHIM}, one process each, as Hermes runs it`);
    const sent = await sendHooks(script.envelopes, target, spool);
    out(`         ${sent.answered} answered in ${(sent.ms / 1000).toFixed(1)} s`);
    if (sent.spooled > 0) {
      throw new Error(
        `${sent.spooled} of ${script.envelopes.length} hooks were not taken by the daemon at ${describeAddress(daemon.address)} (unreachable or 5xx)`,
      );
    }
    const after = await probeHealth(daemon.address);
    if (after.kind === 'up' && counter(after.health, 'transport.refused.token') > refusedBefore) {
      throw new Error(`the daemon at ${describeAddress(daemon.address)} refused the hooks' token (401): ${config.tokenFile} does not hold its hook token`);
    }

    const { events, missing } = await awaitSession(historyFile, script.session, HISTORY_DEADLINE_MS);
    out('');
    out(`What \`hermes-aep tail\` shows for it:`);
    const printer = new Printer({ out, style: stylerFor(process.stdout, process.env), json: false });
    for (const e of events) printer.print(e.event, e.line);
    out('');
    if (missing.length > 0) {
      const what =
        events.length === 0 ? 'nothing arrived' : `${missing[0]} and ${missing.length - 1} more of the ${EXPECTED_TYPES.length} expected events did not arrive`;
      throw new Error(`${what} in ${historyFile} within ${HISTORY_DEADLINE_MS / 1000} s`);
    }
    out(`History: ${historyFile} (${events.length} events)`);
    const traceId = traceIdOf(events.find((e) => e.event['type'] === 'run.started')?.event['traceparent']);
    const collector = () => exportOutcome(daemon.address, daemon.health);
    await showTrace(traceId, exporter, { file: spansFile, offset: spansOffset }, jaeger, out, stopOwn, collector);
    out(`Again:   hermes-aep tail --session ${script.session} --no-follow`);
  } finally {
    rmSync(spool, { recursive: true, force: true });
    await stopOwn();
  }
}
