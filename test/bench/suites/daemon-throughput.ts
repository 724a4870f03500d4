// The daemon's hook throughput over its default transport (the Unix socket), with its default sinks (the JSONL
// history, the OpenTelemetry mirror to the local file exporter), against a bare fastify route of the same
// fastify in its own process on a Unix socket: the same client, the same realistic envelopes, rounds interleaved.
// Sequential: one keep-alive connection, hooks one at a time. Concurrent: 32 connections, one session each at a time.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../../support/paths.js';
import { startDaemonProcess, waitFor } from '../../support/processes.js';
import { soakSession } from '../../support/soak-history.js';
import type { Suite } from '../bench-types.js';
import { SocketClient } from '../support/socket-client.js';
import { dist, interleaved, ratioFigure } from '../support/stats.js';

// Not met yet (issue 10, measured on 2 cores): a hook costs the daemon ~0.5-0.6 ms of CPU against the bare route's
// ~0.1 ms, most of it the history write the reply waits for (the shim's spool relies on that wait to stay
// crash-safe), then the default file span exporter, span building and the snapshot sink. CI guards today's level.
const WHY =
  'a hook costs the daemon ~0.5 ms of CPU against ~0.1 ms for the bare route; the largest part is the history write the reply waits for (so a crash never loses an answered hook), then span building and the default span file';

const LANES = 32;

/** `n` realistic sessions (about 30 hooks each), serialized, with ids unique to `tag`. */
function sessions(tag: string, n: number): string[][] {
  return Array.from({ length: n }, (_, i) => soakSession(`bench_${tag}_${i}`, i).hooks.map((h) => JSON.stringify(h)));
}

export const suite: Suite = {
  name: 'daemon-throughput',
  about: `POST /hook keep-alive over the Unix socket, daemon defaults (history + mirror to the file exporter) vs a bare fastify route; sequential (1 connection) and concurrent (${LANES})`,
  async run(ctx) {
    const rounds = ctx.short ? 3 : 6;
    const seqSessions = ctx.short ? 20 : 80;
    const concSessions = ctx.short ? 64 : 256;
    const daemon = await startDaemonProcess({ AEP_PORT: '', OTEL_TRACES_EXPORTER: 'file' });
    const bareSock = path.join(ctx.tmp('bare-fastify-'), 'bare.sock');
    const bare = spawn(process.execPath, [path.join(ROOT, 'dist', 'test', 'bench', 'support', 'bare-fastify.js'), bareSock], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const bareExit = new Promise<void>((r) => bare.once('exit', () => r()));
    let out = '';
    bare.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const clients = { daemon: new SocketClient(daemon.socketPath, LANES), bare: new SocketClient(bareSock, LANES) };
    try {
      await waitFor('bare fastify ready', () => (out.includes('ready') ? true : undefined), 20_000);
      let k = 0;
      const rate = async (who: 'daemon' | 'bare', lanes: number, n: number) => {
        const work = sessions(`${who}_${k++}`, n);
        const t0 = performance.now();
        const posted = await clients[who].drive(work, lanes);
        return posted / ((performance.now() - t0) / 1000);
      };
      // warm-up: JIT, file creation, the first connections
      await rate('daemon', LANES, 32);
      await rate('bare', LANES, 32);
      ctx.log(`daemon-throughput: ${rounds} rounds × (sequential ${seqSessions} sessions, concurrent ${concSessions} sessions)`);
      const r = await interleaved(rounds, {
        daemonSeq: () => rate('daemon', 1, seqSessions),
        bareSeq: () => rate('bare', 1, seqSessions),
        daemonConc: () => rate('daemon', LANES, concSessions),
        bareConc: () => rate('bare', LANES, concSessions),
      });
      const health = await daemon.health();
      const detail = { hooks_failed: health.hooks_failed, spans_dropped: health.sinks?.otel?.spans_dropped, hooks_per_session: 30 };
      return [
        ratioFigure(
          {
            id: 'daemon.throughput.sequential',
            label: 'daemon POST /hook, sequential (1 keep-alive connection)',
            measure: dist(r.daemonSeq, 'hooks/s', 0),
            yardstick: { label: 'bare fastify route', measure: dist(r.bareSeq, 'req/s', 0) },
            detail,
          },
          { min: 0.5, notMet: { why: WHY, ci: { min: 0.08 } } },
        ),
        ratioFigure(
          {
            id: 'daemon.throughput.concurrent',
            label: `daemon POST /hook, concurrent (${LANES} connections)`,
            measure: dist(r.daemonConc, 'hooks/s', 0),
            yardstick: { label: 'bare fastify route', measure: dist(r.bareConc, 'req/s', 0) },
            detail,
          },
          { min: 0.5, notMet: { why: WHY, ci: { min: 0.12 } } },
        ),
      ];
    } finally {
      clients.daemon.close();
      clients.bare.close();
      bare.kill('SIGTERM');
      await bareExit;
      await daemon.stop();
    }
  },
};
