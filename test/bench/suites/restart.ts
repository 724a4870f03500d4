// Restart to healthy (spawn → GET /healthz 200 over the socket) with a large history (the soak history: 10,000
// sessions, about 300,000 events; short: 2,000), the default file exporter on: after a graceful stop (SIGTERM
// writes the snapshot) and after kill -9 (the periodic snapshot plus the log past it, here 60 hooks). The budget is
// absolute (1 s: the ratio is ms ÷ 1000); a daemon restarted on an empty history in the same rounds stands beside it
// as the yardstick of what any start costs. Each start is split by the daemon's `state rebuilt` log line: node and
// module load (to that line, less the rebuild), state rebuild (snapshot + replay), then wiring, listening and the
// first /healthz answer.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { CLI } from '../../support/paths.js';
import { httpCall } from '../../support/processes.js';
import { soakSession, soakSessionId, writeSoakHistory } from '../../support/soak-history.js';
import type { Figure, Suite } from '../bench-types.js';
import { SocketClient } from '../support/socket-client.js';
import { dist, median, round } from '../support/stats.js';

interface Start {
  readonly healthyMs: number;
  readonly phases: { node_and_modules: number; state_rebuild: number; wiring_listen_first_answer: number };
  readonly rebuiltFrom: string;
  readonly socket: string;
  stop(): Promise<number>;
  kill(): Promise<void>;
}

async function timedStart(root: string): Promise<Start> {
  const socket = path.join(root, 'state', 'hook.sock');
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, 'daemon'], {
    env: { ...process.env, AEP_PORT: '', AEP_LOG_DIR: path.join(root, 'log'), AEP_STATE_DIR: path.join(root, 'state'), OTEL_TRACES_EXPORTER: 'file' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let err = '';
  let rebuiltAt = NaN;
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString('utf8');
    if (Number.isNaN(rebuiltAt) && err.includes('"state rebuilt"')) rebuiltAt = performance.now() - t0;
  });
  let healthyMs = NaN;
  while (Number.isNaN(healthyMs)) {
    if (child.exitCode !== null) throw new Error(`daemon exited early: ${err.slice(-1000)}`);
    if (performance.now() - t0 > 120_000) throw new Error('daemon not healthy after 120 s');
    const r = await httpCall({ socketPath: socket }, { path: '/healthz', headers: { host: 'localhost' }, timeoutMs: 5_000 }).catch(() => undefined);
    if (r?.status === 200) healthyMs = performance.now() - t0;
    else await new Promise((res) => setTimeout(res, 5));
  }
  const rebuilt = JSON.parse(/^.*"state rebuilt".*$/m.exec(err)?.[0] ?? '{}') as { ms?: number; process_ms?: number; from?: string };
  const stateMs = rebuilt.ms ?? NaN;
  const before = (rebuilt.process_ms ?? rebuiltAt) - stateMs;
  return {
    healthyMs,
    rebuiltFrom: rebuilt.from ?? '?',
    phases: {
      node_and_modules: round(before, 1),
      state_rebuild: round(stateMs, 1),
      wiring_listen_first_answer: round(healthyMs - rebuiltAt, 1),
    },
    socket,
    stop: async () => {
      const t = performance.now();
      child.kill('SIGTERM');
      await exited;
      return performance.now() - t;
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

const medianPhases = (xs: readonly Start[]) =>
  Object.fromEntries(
    (['node_and_modules', 'state_rebuild', 'wiring_listen_first_answer'] as const).map((k) => [k, round(median(xs.map((x) => x.phases[k])), 1)]),
  );

export const suite: Suite = {
  name: 'restart',
  about:
    'spawn → /healthz 200 with the soak history (10,000 sessions; short 2,000), file exporter on, after SIGTERM and after kill -9; an empty-history start in the same rounds',
  async run(ctx) {
    const sessions = ctx.short ? 2_000 : 10_000;
    const rounds = ctx.short ? 3 : 5;
    const root = ctx.tmp('restart-');
    const h = writeSoakHistory({ root, sessions });
    ctx.log(`restart: history of ${h.files} sessions, ${h.events} events, ${Math.round(h.bytes / 2 ** 20)} MB; first start (full read-back, not timed)`);
    const first = await timedStart(root);
    const firstMs = first.healthyMs;
    await first.stop();
    const empty: Start[] = [];
    const graceful: Start[] = [];
    const crashed: Start[] = [];
    const stops: number[] = [];
    // the yardstick restarts too: an empty history, stopped gracefully before each timed start
    const emptyRoot = ctx.tmp('restart-empty-');
    await (await timedStart(emptyRoot)).stop();
    for (let r = 0; r < rounds; r++) {
      const e = await timedStart(emptyRoot);
      empty.push(e);
      await e.stop();
      const g = await timedStart(root);
      graceful.push(g);
      // hooks the log holds past the last snapshot when the process is killed
      const client = new SocketClient(g.socket, 4);
      const sid = (j: number) => soakSessionId(sessions + r * 2 + j);
      await client.drive(
        [0, 1].map((j) =>
          soakSession(sid(j), sessions + r * 2 + j)
            .hooks.slice(0, 30)
            .map((x) => JSON.stringify(x)),
        ),
        2,
      );
      client.close();
      await g.kill();
      const k = await timedStart(root);
      crashed.push(k);
      stops.push(await k.stop());
    }
    const yard = {
      label: 'the same daemon started on an empty history',
      measure: dist(
        empty.map((x) => x.healthyMs),
        'ms',
        0,
      ),
    };
    const fig = (id: string, label: string, xs: Start[]): Figure => {
      const m = dist(
        xs.map((x) => x.healthyMs),
        'ms',
        0,
      );
      return {
        id,
        label,
        measure: m,
        yardstick: yard,
        ratio: round(m.value / 1000),
        budget: { max: 1 },
        detail: {
          ratio_basis: 'ms ÷ 1000: the budget is an absolute 1 s; the empty-history start is context, not the divisor',
          over_empty_start: round(m.value / yard.measure.value),
          rebuilt_from: [...new Set(xs.map((x) => x.rebuiltFrom))],
          phases_ms: medianPhases(xs),
          empty_phases_ms: medianPhases(empty),
          history: { sessions: h.files, events: h.events, mb: Math.round(h.bytes / 2 ** 20) },
          first_start_without_snapshot_ms: Math.round(firstMs),
          ...(id.endsWith('sigterm') ? { graceful_stop_ms: dist(stops, 'ms', 0) } : {}),
        },
      };
    };
    return [
      fig('restart.after_sigterm', 'restart to healthy after a graceful stop, large history', graceful),
      fig('restart.after_kill9', 'restart to healthy after kill -9, large history', crashed),
    ];
  },
};
