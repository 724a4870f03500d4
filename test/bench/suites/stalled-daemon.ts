// The same promise as stalled-subscriber, measured on the real daemon process (AEP-0003 §8.4): 100,000 events
// ingested through POST /events in batches while POST /hook latency is sampled, once with only a healthy SSE
// consumer attached and once with a second consumer whose socket never reads (TCP window full, then the daemon's
// own write buffer). Figures: the daemon's RSS at the end (from /proc) and the median hook latency, stalled run ÷
// healthy run. The detail says whether the stalled consumer was disconnected (`stream.kicked`).
import { connect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import type { Suite } from '../bench-types.js';
import { dist, ratioFigure, round } from '../support/stats.js';
import { keyedSession } from '../../support/hook-client.js';
import { httpCall, startDaemonProcess, type DaemonProcess } from '../../support/processes.js';

const TOKEN = 'bench-stalled-token-0123456789';
const EVENTS = 100_000;
const BATCH = 1_000;

function batch(b: number): string {
  const lines: string[] = [];
  for (let i = b * BATCH; i < (b + 1) * BATCH; i++) {
    const session = `s${i % 100}`;
    lines.push(
      JSON.stringify({
        aep: '0.1',
        id: `01JBENCHD${String(i).padStart(10, '0')}`,
        type: 'tool.completed',
        subject: 'Bash',
        time: '2026-07-03T10:15:04.221Z',
        source: `aep://bench-emitter/agent/codex/session/${session}`,
        agent: 'codex',
        session,
        run: 'r_1',
        seq: Math.floor(i / 100),
        severity: i % 5 === 0 ? 'notice' : 'info',
        capture: 'metadata',
        data: { tool: { name: 'Bash', call_id: `t_${i}` }, status: 'success', duration_ms: 1240 },
      }),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** A consumer that reads everything (and counts it), or one that never reads after sending its request. */
function consumer(url: string, stalled: boolean): { socket: Socket; received: () => number } {
  const u = new URL(url);
  const socket = connect(Number(u.port), u.hostname);
  let bytes = 0;
  socket.write(`GET /stream HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TOKEN}\r\nAccept: text/event-stream\r\n\r\n`);
  if (stalled) socket.pause();
  else socket.on('data', (c: Buffer) => (bytes += c.length));
  socket.on('error', () => undefined);
  return { socket, received: () => bytes };
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function scenario(stalled: boolean): Promise<{ rss: number; hookMs: number[]; stream: Record<string, unknown>; received: number }> {
  const d: DaemonProcess = await startDaemonProcess({ AEP_TOKEN: TOKEN, AEP_PORT: '0' });
  try {
    const healthy = consumer(d.url, false);
    const stuck = stalled ? consumer(d.url, true) : undefined;
    const hooks = keyedSession('bench_stalled', EVENTS / BATCH);
    const hookMs: number[] = [];
    for (let b = 0; b < EVENTS / BATCH; b++) {
      const r = await httpCall(
        { url: d.url },
        {
          method: 'POST',
          path: '/events',
          headers: { authorization: `Bearer ${TOKEN}`, 'aep-version': '0.1', 'content-type': 'application/x-ndjson' },
          body: batch(b),
        },
      );
      if (r.status !== 202) throw new Error(`ingest answered ${r.status}`);
      const h = hooks[b % hooks.length]!;
      const t0 = performance.now();
      const hr = await new Promise<number>((resolve, reject) => {
        const req = request(
          { socketPath: d.socketPath, path: '/hook', method: 'POST', headers: { host: 'localhost', 'content-type': 'application/json' } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(h.body);
      });
      hookMs.push(performance.now() - t0);
      if (hr !== 200) throw new Error(`hook answered ${hr}`);
    }
    const health = await d.health();
    const out = { rss: rssMb(d.child.pid!), hookMs, stream: health.stream as Record<string, unknown>, received: healthy.received() };
    healthy.socket.destroy();
    stuck?.socket.destroy();
    return out;
  } finally {
    await d.stop();
  }
}

export const suite: Suite = {
  name: 'stalled-daemon',
  about: 'the real daemon: 100,000 ingested events and sampled hooks, with vs without an SSE consumer that never reads',
  async run(ctx) {
    const rounds = ctx.short ? 1 : 3;
    const healthy: Awaited<ReturnType<typeof scenario>>[] = [];
    const stalled: Awaited<ReturnType<typeof scenario>>[] = [];
    for (let r = 0; r < rounds; r++) {
      ctx.log(`stalled-daemon: round ${r + 1}/${rounds}`);
      healthy.push(await scenario(false));
      stalled.push(await scenario(true));
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const detail = {
      events: EVENTS,
      rss_mb: { healthy: healthy.map((x) => round(x.rss, 1)), stalled: stalled.map((x) => round(x.rss, 1)) },
      stalled_stream: stalled.map((x) => ({ kicked: x.stream['kicked'], dropped_slow: x.stream['dropped_slow'] })),
      healthy_consumer_bytes: healthy.map((x) => x.received),
    };
    return [
      ratioFigure({
        id: 'stream.stalled_daemon_rss',
        label: `daemon RSS after ${EVENTS.toLocaleString('en')} ingested events with a stalled SSE consumer ÷ without`,
        measure: { value: round(med(stalled.map((x) => x.rss)), 1), unit: 'MB' },
        yardstick: { label: 'daemon RSS, healthy consumer only', measure: { value: round(med(healthy.map((x) => x.rss)), 1), unit: 'MB' } },
        detail,
      }),
      ratioFigure({
        id: 'stream.stalled_daemon_hook',
        label: 'POST /hook latency during the ingest with a stalled SSE consumer ÷ without (median)',
        measure: dist(
          stalled.flatMap((x) => x.hookMs),
          'ms',
        ),
        yardstick: {
          label: 'POST /hook latency, healthy consumer only',
          measure: dist(
            healthy.flatMap((x) => x.hookMs),
            'ms',
          ),
        },
        detail: { stalled_stream: detail.stalled_stream },
      }),
    ];
  },
};
