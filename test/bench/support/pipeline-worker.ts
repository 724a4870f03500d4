// The real daemon (startDaemon: its settings from the environment, every sink, the snapshotter) in this process,
// driven through its hook path (`pipeline`) without HTTP: the body is parsed and validated as POST /hook does,
// then handed to the pipeline, and answered once durable. Two modes, one JSON line on stdout:
//   memory <sessions> <turns> <tools>   sessions through 64 lanes; RSS sampled every 10,000 hooks; at the half
//                                       and the end (node --expose-gc) after an ordinary full GC, then again after
//                                       a memory-reducing one (see `settle`)
//   profile <hooks>                     hooks one at a time; per hook: parse, map (the pure mapping alone),
//                                       the synchronous rest of the pipeline (identity, span context, publish), the write
import { hookEnvelopeSchema } from '../../../src/hermes/envelope.js';
import { loadSettings } from '../../../src/daemon/settings.js';
import { silentLogger } from '../../../src/core/logger.js';
import { startDaemon } from '../../../src/daemon/main.js';
import { readHook } from '../../../src/mapping/map-hook.js';
import { soakEnvelope, soakSession } from '../../support/soak-history.js';
import type { Envelope } from '../../support/scripted-session.js';

const [mode = '', ...nums] = process.argv.slice(2);
const settings = await loadSettings();
const daemon = await startDaemon(settings, silentLogger);
const gc = (globalThis as { gc?: (opts?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void }).gc;

/**
 * A full GC that also hands the freed heap pages back (V8's last-resort GC, as under memory pressure). An ordinary
 * `gc()` frees the objects but keeps the heap V8 grew for the allocation rate committed (measured here: 215-290 MB
 * committed for 40-70 MB live), so RSS after it says more about when the last GC ran than about what is kept.
 */
const settle = () => gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });

interface Sample {
  rss_mb: number;
  heap_mb: number;
  events: number;
  /** after an ordinary gc() only: V8's committed heap still in RSS */
  gc_rss_mb: number;
  gc_heap_total_mb: number;
  heap_total_mb: number;
}

/** A session of `turns` turns of `tools` tool calls each: 2 + turns × (2 + 2 × tools) hooks. */
function session(sid: string, turns: number, tools: number): Envelope[] {
  const out = [soakEnvelope(sid, 'on_session_start', { model: 'hermes-4', platform: 'cli' })];
  for (let t = 0; t < turns; t++) {
    const x = { turn_id: `${sid}:task${t}:0000000${t}`, task_id: `task${t}` };
    out.push(soakEnvelope(sid, 'pre_llm_call', { ...x, user_message: `step ${t}`, conversation_history: [], is_first_turn: t === 0, model: 'hermes-4' }));
    for (let c = 0; c < tools; c++) {
      const id = `call_${t}_${c}`;
      const input = c % 2 ? { path: `/home/dev/proj/f${c}.ts` } : { command: `npm test -- ${c}` };
      const name = c % 2 ? 'read_file' : 'terminal';
      out.push(soakEnvelope(sid, 'pre_tool_call', { ...x, tool_call_id: id }, { tool_name: name, tool_input: input }));
      out.push(
        soakEnvelope(
          sid,
          'post_tool_call',
          { ...x, tool_call_id: id, result: '{"output": "ok", "exit_code": 0}', duration_ms: 40, status: 'ok' },
          { tool_name: name },
        ),
      );
    }
    out.push(soakEnvelope(sid, 'on_session_end', { ...x, completed: true, interrupted: false }));
  }
  out.push(soakEnvelope(sid, 'on_session_finalize', {}));
  return out;
}

/** POST /hook's work before the pipeline: the body parsed and checked as a Hermes envelope. */
const parse = (body: string) => hookEnvelopeSchema.parse(JSON.parse(body));

async function memory(sessions: number, turns: number, tools: number): Promise<unknown> {
  const perSession = 2 + turns * (2 + 2 * tools);
  const total = sessions * perSession;
  const samples: { hooks: number; events: number; rss_mb: number; heap_mb: number; external_mb: number }[] = [];
  const mb = (x: number) => Math.round(x / 2 ** 20);
  let hooks = 0;
  let events = 0;
  let half: Sample | undefined;
  const sample = (): Sample => {
    gc?.();
    const g = process.memoryUsage();
    settle();
    const m = process.memoryUsage();
    return { rss_mb: mb(m.rss), heap_mb: mb(m.heapUsed), events, gc_rss_mb: mb(g.rss), gc_heap_total_mb: mb(g.heapTotal), heap_total_mb: mb(m.heapTotal) };
  };
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      for (let s = next++; s < sessions; s = next++) {
        for (const env of session(`mem_${s}`, turns, tools)) {
          const outcome = await daemon.pipeline.handle(parse(JSON.stringify(env)));
          if (outcome.status !== 'recorded') throw new Error(`hook ${outcome.status}`);
          events += outcome.events.length;
          hooks++;
          if (hooks % 10_000 === 0) {
            const m = process.memoryUsage();
            samples.push({ hooks, events, rss_mb: mb(m.rss), heap_mb: mb(m.heapUsed), external_mb: mb(m.external) });
          }
          if (!half && hooks >= total / 2) half = sample();
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const end = sample();
  return {
    hooks,
    events,
    seconds,
    hooks_per_s: Math.round(hooks / seconds),
    half,
    end,
    max_sessions: settings.config.maxSessions,
    samples,
    gc: Boolean(gc),
  };
}

async function profile(n: number): Promise<unknown> {
  const bodies = Array.from({ length: Math.ceil(n / 30) }, (_, i) => soakSession(`prof_${i}`, i).hooks.map((h) => JSON.stringify(h)))
    .flat()
    .slice(0, n);
  const parseMs: number[] = [];
  const mapMs: number[] = [];
  const syncMs: number[] = [];
  const writeMs: number[] = [];
  for (const body of bodies) {
    const t0 = performance.now();
    const env = parse(body);
    const t1 = performance.now();
    readHook(env, settings.config.policy);
    const t2 = performance.now();
    const p = daemon.pipeline.handle(env);
    const t3 = performance.now();
    await p;
    const t4 = performance.now();
    parseMs.push(t1 - t0);
    mapMs.push(t2 - t1);
    syncMs.push(t3 - t2);
    writeMs.push(t4 - t3);
  }
  return { parseMs, mapMs, syncMs, writeMs };
}

const result =
  mode === 'memory' ? await memory(Number(nums[0]), Number(nums[1]), Number(nums[2])) : mode === 'profile' ? await profile(Number(nums[0])) : undefined;
if (result === undefined) throw new Error('usage: pipeline-worker.js memory <sessions> <turns> <tools> | profile <hooks>');
await daemon.close();
process.stdout.write(`${JSON.stringify(result)}\n`);
