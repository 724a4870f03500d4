// A subscriber that never reads (AEP-0003 §8.4): 100,000 events published into the real StreamHub (the fan-out core
// the daemon's /stream and /socket serve from) with one live subscriber that keeps up, then the same with a second
// one whose transport never sends (its pending bytes only grow, `drained()` never settles). Each scenario runs in a
// child process of its own (node --expose-gc) so RSS is not shared: the figures are RSS growth over the run (after a
// GC) and the median per-publish latency, the stalled run ÷ the healthy run. No threshold: the hub's promise is that
// the stalled subscriber is disconnected once it would cost a notice-or-above drop, and that publishing never waits.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Suite } from '../bench-types.js';
import { dist, ratioFigure, round } from '../support/stats.js';
import { StreamHub } from '../../../src/stream/stream-hub.js';
import type { SubscriberSink } from '../../../src/stream/hub-types.js';
import { wireOf, type WireEvent } from '../../../src/aep/wire.js';

interface ChildResult {
  rss_growth_mb: number;
  heap_growth_mb: number;
  publish_us: number[];
  kicked_at: number | undefined;
  stats: Record<string, number>;
  delivered_healthy: number;
}

const EVENTS = 100_000;
const SESSIONS = 100;

function event(i: number): WireEvent {
  const e = {
    aep: '0.1',
    id: `01JBENCH${String(i).padStart(10, '0')}`,
    type: 'tool.completed',
    subject: 'Bash',
    time: '2026-07-03T10:15:04.221Z',
    source: `aep://bench/agent/hermes/session/s${i % SESSIONS}`,
    agent: 'hermes',
    session: `s${i % SESSIONS}`,
    run: 'r_1',
    seq: Math.floor(i / SESSIONS),
    epoch: 0,
    // one in five notice: past the 8 MiB client budget the stalled subscriber must be disconnected, not silently dropped
    severity: i % 5 === 0 ? 'notice' : 'info',
    capture: 'metadata',
    data: { tool: { name: 'Bash', call_id: `t_${i}` }, status: 'success', duration_ms: 1240 },
  };
  return wireOf(e, JSON.stringify(e), 'own');
}

/** A transport that sends at once (the healthy consumer) or never (the stalled one). */
function sink(stalled: boolean, onKick: () => void): SubscriberSink & { delivered: number } {
  let unsent = 0;
  return {
    delivered: 0,
    deliver(_w, line) {
      this.delivered++;
      if (stalled) unsent += Buffer.byteLength(line);
    },
    exhausted() {},
    replayed() {},
    kick: onKick,
    pending: () => unsent,
    drained: () => (stalled ? new Promise<void>(() => {}) : Promise.resolve()),
  };
}

async function child(stalled: boolean): Promise<ChildResult> {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
  // the daemon's defaults (config.stream)
  const hub = new StreamHub({ buffer: 1_000, sessions: 1_000, maxBytes: 128 * 1024 * 1024, clientBytes: 8 * 1024 * 1024, subscriptions: 256 });
  const healthy = sink(false, () => undefined);
  hub.subscribe({ filter: () => true }, healthy);
  let kickedAt: number | undefined;
  let i = 0;
  if (stalled)
    hub.subscribe(
      { filter: () => true },
      sink(true, () => (kickedAt = i)),
    );
  await new Promise((r) => setImmediate(r));
  gc();
  const rss0 = process.memoryUsage().rss;
  const heap0 = process.memoryUsage().heapUsed;
  const us: number[] = [];
  for (; i < EVENTS; i++) {
    const w = event(i);
    const t0 = performance.now();
    hub.publish([w]);
    us.push((performance.now() - t0) * 1000);
  }
  gc();
  const m = process.memoryUsage();
  return {
    rss_growth_mb: round((m.rss - rss0) / 2 ** 20, 1),
    heap_growth_mb: round((m.heapUsed - heap0) / 2 ** 20, 1),
    publish_us: us,
    kicked_at: kickedAt,
    stats: hub.stats(),
    delivered_healthy: healthy.delivered,
  };
}

const run = promisify(execFile);

async function scenario(stalled: boolean): Promise<ChildResult> {
  const { stdout } = await run(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', stalled ? 'stalled' : 'healthy'], {
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout) as ChildResult;
}

export const suite: Suite = {
  name: 'stalled-subscriber',
  about: '100,000 events through the StreamHub in process (daemon defaults), one healthy subscriber, with vs without a second that never reads',
  async run(ctx) {
    const rounds = ctx.short ? 1 : 3;
    const healthy: ChildResult[] = [];
    const stalled: ChildResult[] = [];
    for (let r = 0; r < rounds; r++) {
      ctx.log(`stalled-subscriber: round ${r + 1}/${rounds}`);
      healthy.push(await scenario(false));
      stalled.push(await scenario(true));
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const rssH = med(healthy.map((x) => x.rss_growth_mb));
    const rssS = med(stalled.map((x) => x.rss_growth_mb));
    const latH = dist(
      healthy.flatMap((x) => x.publish_us),
      'µs',
    );
    const latS = dist(
      stalled.flatMap((x) => x.publish_us),
      'µs',
    );
    const last = stalled[stalled.length - 1]!;
    const detail = {
      events: EVENTS,
      kicked_at_event: stalled.map((x) => x.kicked_at ?? null),
      stalled_hub_stats: last.stats,
      healthy_delivered: last.delivered_healthy,
      heap_growth_mb: { healthy: healthy.map((x) => x.heap_growth_mb), stalled: stalled.map((x) => x.heap_growth_mb) },
      rss_growth_mb: { healthy: healthy.map((x) => x.rss_growth_mb), stalled: stalled.map((x) => x.rss_growth_mb) },
    };
    return [
      ratioFigure({
        id: 'stream.stalled_subscriber_rss',
        label: `RSS growth over ${EVENTS.toLocaleString('en')} events with a stalled subscriber ÷ without`,
        measure: { value: Math.max(rssS, 0.1), unit: 'MB' },
        yardstick: { label: 'RSS growth, healthy subscriber only', measure: { value: Math.max(rssH, 0.1), unit: 'MB' } },
        detail,
      }),
      ratioFigure({
        id: 'stream.stalled_subscriber_publish',
        label: 'per-publish latency with a stalled subscriber ÷ without (median)',
        measure: latS,
        yardstick: { label: 'per-publish latency, healthy subscriber only', measure: latH },
        detail: { kicked_at_event: detail.kicked_at_event },
      }),
    ];
  },
};

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--child') {
  child(process.argv[3] === 'stalled').then(
    (r) => process.stdout.write(JSON.stringify(r)),
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
