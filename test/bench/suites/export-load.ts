// Spans under load: 1,000 hooks/s for 60 s (short: 10 s) through the daemon over its socket, the OpenTelemetry
// mirror exporting over OTLP/HTTP to a LIVE collector (the real otelcol from the provisioning cache, with
// test/bench/otelcol-bench.yaml). Every span the daemon exported must be accepted by the collector (its own
// otelcol_receiver_accepted_spans counter), and none dropped (the daemon's /healthz sinks.otel counters).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { freePorts } from '../../support/ports.js';
import { ROOT } from '../../support/paths.js';
import { startDaemonProcess, waitFor } from '../../support/processes.js';
import { soakSession } from '../../support/soak-history.js';
import type { Suite } from '../bench-types.js';
import { SocketClient } from '../support/socket-client.js';
import { round } from '../support/stats.js';

const RATE = 1_000;
const LANES = 64;

/** The sum of one counter's samples in a Prometheus text page. */
function counter(page: string, name: string): number {
  let sum = 0;
  for (const line of page.split('\n')) if (line.startsWith(name)) sum += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
  return sum;
}

export const suite: Suite = {
  name: 'export-load',
  about: `${RATE} hooks/s for 60 s (short: 10 s) over the socket, mirror on, OTLP/HTTP to a live otelcol; spans counted at both ends`,
  async run(ctx) {
    const seconds = ctx.short ? 10 : 60;
    if (!ctx.provision) throw new Error('export-load needs a context that can provision the collector');
    const otelcol = (await ctx.provision('provision-otel.sh')).get('OTELCOL');
    if (!otelcol) throw new Error('provision-otel.sh printed no OTELCOL= line');
    const [http, health, metrics] = (await freePorts(3)) as [number, number, number];
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(OTEL_|OTELCOL_)/.test(k)) env[k] = v;
    const col = spawn(otelcol, ['--config', path.join(ROOT, 'test', 'bench', 'otelcol-bench.yaml')], {
      env: {
        ...env,
        BENCH_OTELCOL_OTLP_HTTP: `127.0.0.1:${http}`,
        BENCH_OTELCOL_HEALTH: `127.0.0.1:${health}`,
        BENCH_OTELCOL_METRICS_PORT: String(metrics),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let colLog = '';
    col.stderr.on('data', (c: Buffer) => (colLog = (colLog + c.toString('utf8')).slice(-20_000)));
    const colExit = new Promise<void>((r) => col.once('exit', () => r()));
    const scrape = async () => (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text();
    let daemon: Awaited<ReturnType<typeof startDaemonProcess>> | undefined;
    let client: SocketClient | undefined;
    try {
      await waitFor(
        `otelcol healthy (${colLog.slice(-300)})`,
        async () => (col.exitCode === null ? (await fetch(`http://127.0.0.1:${health}/`).catch(() => undefined))?.status === 200 || undefined : undefined),
        30_000,
        50,
      );
      daemon = await startDaemonProcess({ AEP_PORT: '', OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${http}` });
      client = new SocketClient(daemon.socketPath, LANES);
      const total = RATE * seconds;
      const bodies: string[][] = [];
      for (let i = 0, n = 0; n < total; i++) {
        const hooks = soakSession(`load_${i}`, i).hooks.map((h) => JSON.stringify(h));
        bodies.push(hooks.slice(0, total - n));
        n += Math.min(hooks.length, total - n);
      }
      ctx.log(`export-load: ${total} hooks at ${RATE}/s over ${LANES} lanes`);
      // open loop: hook k is sent at t0 + k/RATE (or as soon as its lane is free, if the daemon falls behind)
      let k = 0;
      let next = 0;
      let late = 0;
      const t0 = performance.now();
      const d = daemon;
      const load = Promise.all(
        Array.from({ length: LANES }, async () => {
          for (let s = next++; s < bodies.length; s = next++) {
            for (const body of bodies[s]!) {
              const due = t0 + (k++ * 1000) / RATE;
              const wait = due - performance.now();
              if (wait > 0) await new Promise((r) => setTimeout(r, wait));
              else if (wait < -100) late++;
              const status = await client!.post(body);
              if (status !== 200) throw new Error(`POST /hook answered ${status}`);
            }
          }
        }),
      );
      await load.catch((err: unknown) => {
        // say whether the daemon is still there: a reset from a live daemon and a dead daemon are different findings
        const state = d.child.exitCode !== null || d.child.signalCode !== null ? `daemon exited (${d.child.exitCode ?? d.child.signalCode})` : 'daemon alive';
        throw new Error(`${(err as Error).message} after ${Math.round(performance.now() - t0)} ms; ${state}; daemon stderr: ${d.stderr().slice(-1500)}`);
      });
      const sendSeconds = (performance.now() - t0) / 1000;
      // every finished span handed to the exporter and answered, then the collector's counter caught up
      const otel = await waitFor(
        'the mirror drained',
        async () => {
          const o = (await daemon!.health()).sinks.otel as Record<string, number>;
          return o.spans_queued === 0 ? o : undefined;
        },
        60_000,
        100,
      );
      const accepted = await waitFor(
        'the collector counted every exported span',
        async () => {
          const n = counter(await scrape(), 'otelcol_receiver_accepted_spans');
          return n >= otel.spans_exported! ? n : undefined;
        },
        30_000,
        200,
      ).catch(async () => counter(await scrape(), 'otelcol_receiver_accepted_spans'));
      const page = await scrape();
      const h = await daemon.health();
      const exported = otel.spans_exported!;
      const detail = {
        seconds,
        hooks: total,
        achieved_hooks_per_s: round(total / sendSeconds, 0),
        hooks_sent_over_100ms_late: late,
        daemon_otel: otel,
        collector: {
          accepted_spans: accepted,
          refused_spans: counter(page, 'otelcol_receiver_refused_spans'),
          exporter_sent_spans: counter(page, 'otelcol_exporter_sent_spans'),
        },
        hooks_failed: h.hooks_failed,
      };
      return [
        {
          id: 'export.received',
          label: `spans the collector accepted ÷ spans the daemon exported (${RATE} hooks/s for ${seconds} s)`,
          measure: { value: accepted, unit: 'spans' },
          yardstick: { label: 'spans exported', measure: { value: exported, unit: 'spans' } },
          ratio: round(accepted / exported, 4),
          budget: { min: 1 },
          detail,
        },
        {
          id: 'export.dropped',
          label: 'spans dropped ÷ spans exported (daemon /healthz)',
          measure: { value: otel.spans_dropped!, unit: 'spans' },
          yardstick: { label: 'spans exported', measure: { value: exported, unit: 'spans' } },
          ratio: round(otel.spans_dropped! / exported, 4),
          budget: { max: 0 },
        },
      ];
    } finally {
      client?.close();
      await daemon?.stop();
      col.kill('SIGTERM');
      await colExit;
    }
  },
};
