// Memory over a long run: 10,000 sessions of 106 hooks (4 turns of 12 tool calls), over a million events, through
// the real daemon's hook path in process (startDaemon with every default sink; the body parsed and validated as
// POST /hook does, HTTP aside: the socket path would take about ten minutes at this size on 2 cores), 64 sessions
// in flight. RSS after a GC at the half of the hooks and at the end: the last half may add under 10 %.
import type { Suite } from '../bench-types.js';
import { round } from '../support/stats.js';
import { runPipelineWorker } from '../support/worker.js';

interface MemoryRun {
  hooks: number;
  events: number;
  seconds: number;
  hooks_per_s: number;
  half: { rss_mb: number; heap_mb: number; events: number };
  end: { rss_mb: number; heap_mb: number; events: number };
  samples: { hooks: number; events: number; rss_mb: number; heap_mb: number; external_mb: number }[];
  gc: boolean;
}

export const suite: Suite = {
  name: 'memory',
  about: 'over a million events across 10,000 sessions (short: a tenth) through the real daemon in process (no HTTP), 64 sessions in flight; RSS after GC',
  async run(ctx) {
    const sessions = ctx.short ? 1_000 : 10_000;
    ctx.log(`memory: ${sessions} sessions × 106 hooks`);
    const r = await runPipelineWorker<MemoryRun>(['memory', String(sessions), '4', '12'], ctx.tmp('memory-'), ['--expose-gc']);
    return [
      {
        id: 'memory.last_half',
        label: `RSS after ${r.end.events.toLocaleString('en')} events ÷ RSS after ${r.half.events.toLocaleString('en')} (${sessions.toLocaleString('en')} sessions)`,
        measure: { value: r.end.rss_mb, unit: 'MB' },
        yardstick: { label: 'RSS at the half', measure: { value: r.half.rss_mb, unit: 'MB' } },
        ratio: round(r.end.rss_mb / r.half.rss_mb),
        budget: { max: 1.1 },
        detail: {
          scale: ctx.short ? 'short: 1,000 sessions' : 'full: 10,000 sessions',
          path: 'in process (startDaemon, pipeline.handle), no HTTP',
          hooks: r.hooks,
          events: r.events,
          seconds: round(r.seconds, 1),
          hooks_per_s: r.hooks_per_s,
          heap_mb: { half: r.half.heap_mb, end: r.end.heap_mb },
          rss_mb_every_10k_hooks: r.samples.map((s) => s.rss_mb),
          heap_mb_every_10k_hooks: r.samples.map((s) => s.heap_mb),
          external_mb_every_10k_hooks: r.samples.map((s) => s.external_mb),
          gc_before_sampling: r.gc,
        },
      },
    ];
  },
};
