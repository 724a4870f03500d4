import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSpanExporter } from '../../src/otel/file-span-exporter.js';
import { loadOtelConfig } from '../../src/otel/otel-config.js';
import { OtelMirror } from '../../src/otel/otel-mirror.js';
import { samplerFromEnv } from '../../src/otel/sampler.js';
import { checkEnvelope, lineOf } from '../../src/stream/envelope-check.js';
import { ForeignHistory, foreignFileOf } from '../../src/history/foreign-history.js';
import { BridgeIngress } from '../../src/stream/ingress.js';
import type { WireEvent } from '../../src/aep/wire.js';
import { decodeResourceSpans, type DecodedSpan } from '../support/otlp-json.js';
import { MiniHub } from '../support/mini-hub.js';
import { ROOT } from '../support/paths.js';
import { waitFor } from '../support/processes.js';

/**
 * The AEP golden corpus (fixtures/aep/golden, 64 events from five emitters)
 * through the bridge as an NDJSON batch would bring it: every event kept
 * byte for byte in the history and in what the hub holds for a `from: "all"`
 * replay, and every lifecycle unit drawn as the right span, keyed by
 * `(source, session)`. The HTTP and SSE ends are the routes' own tests; this
 * is what sits behind them.
 */
const GOLDEN = readFileSync(path.join(ROOT, 'fixtures', 'aep', 'golden', 'golden.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean);

let root: string;
let hub: MiniHub;
let history: ForeignHistory;
let mirror: OtelMirror;
let spansFile: string;
let wires: WireEvent[];
let outcome: Awaited<ReturnType<BridgeIngress['ingest']>>;

beforeAll(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'aep-bridge-golden-'));
  spansFile = path.join(root, 'spans.jsonl');
  const env = { OTEL_BSP_SCHEDULE_DELAY: '0', AEP_OTEL_IDLE_MS: '1000', AEP_OTEL_FILE: spansFile };
  // the clock far past the corpus: units the corpus leaves open close as idle at the first sweep
  mirror = new OtelMirror({
    config: loadOtelConfig(root, env),
    exporter: new FileSpanExporter(spansFile),
    sampler: samplerFromEnv(env),
    version: 'golden',
    now: () => Date.parse('2030-01-01T00:00:00Z'),
  });
  mirror.start();
  hub = new MiniHub();
  history = new ForeignHistory({ historyDir: root, queueMax: 10_000, fsyncIntervalMs: 0 });
  const ingress = new BridgeIngress({ hub, history, mirror });
  wires = GOLDEN.map((text) => {
    const parsed: unknown = JSON.parse(text);
    const r = checkEnvelope(parsed, lineOf(text, parsed));
    if (!r.ok) throw new Error(`golden line rejected: ${r.detail}`);
    return r.wire;
  });
  outcome = await ingress.ingest(wires);
});

afterAll(async () => {
  await history.shutdown();
  await mirror.shutdown();
});

function spans(): DecodedSpan[] {
  if (!existsSync(spansFile)) return [];
  return readFileSync(spansFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => decodeResourceSpans(JSON.parse(l).resourceSpans));
}

describe('bridge: the AEP golden corpus ingested (AEP-0001 §5, §7; AEP-0003 §3.1, §5)', () => {
  it('every event is accepted; the one id two emitters share is two events ((source, id), AEP-0001 §7.4)', () => {
    expect(outcome).toEqual({ status: 'accepted', accepted: 64, duplicates: 0 });
  });

  it('AEP-0003 §5: what a from:"all" replay holds is every event, byte-identical, in arrival order, never re-sequenced', () => {
    expect(hub.held.map((w) => w.line)).toEqual(GOLDEN);
    expect(hub.live.map((w) => w.line)).toEqual(GOLDEN);
    expect(hub.held.every((w) => w.origin === 'ingest')).toBe(true);
  });

  it('AEP-0003 §3.1: the history holds every line byte-identical, by agent and session, in order', () => {
    const byFile = new Map<string, string[]>();
    for (const w of wires) {
      const f = foreignFileOf(history.dir, w);
      byFile.set(f, [...(byFile.get(f) ?? []), w.line]);
    }
    for (const [file, lines] of byFile) expect(readFileSync(file, 'utf8')).toBe(lines.map((l) => `${l}\n`).join(''));
    expect(byFile.has(path.join(root, 'ingest', 'claude-code', '.agent.jsonl'))).toBe(true);
    expect(existsSync(path.join(root, 'hermes'))).toBe(false);
  });

  it('every unit of the corpus becomes its span: names, parents, status (the file exporter)', async () => {
    // run r_0042..r_0044 and s_opt's run end by their terminals; the s_dup/s_shared/s_epoch runs close at the idle sweep
    await waitFor(
      'the idle sweep closed the open runs',
      () => (spans().filter((s) => s.name === 'invoke_agent alpha-agent').length === 2 ? true : undefined),
      10_000,
    );
    await mirror.flush();
    const all = spans();
    const byRun = (run: string) => all.find((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent' && s.attributes['aep.run_id'] === run);
    const r42 = byRun('r_0042')!;
    expect(r42.name).toBe('invoke_agent claude-code');
    expect(r42.parentSpanId).toBeUndefined();
    expect(r42.attributes['aep.session_id']).toBe('s_8f2c');
    const t91 = all.find((s) => s.attributes['gen_ai.tool.call.id'] === 't_91')!;
    expect(t91.name).toBe('execute_tool Bash');
    expect(t91.parentSpanId).toBe(r42.spanId);
    expect(t91.traceId).toBe(r42.traceId);
    expect(t91.events.map((e) => e.name)).toEqual(['tool.requested', 'tool.completed']);
    // the permission card hangs under the tool call that caused it; answered and resolved land on it
    const card = all.find((s) => s.attributes['aep.attention.request_id'] === '01JX9YB4RQ000000000000GOLD')!;
    expect(card.name).toBe('attention permission');
    expect(card.parentSpanId).toBe(t91.spanId);
    expect(card.events.map((e) => e.name)).toEqual(['attention.requested', 'attention.answered', 'attention.resolved']);
    const r43 = byRun('r_0043')!;
    expect(r43.status.code).toBe(2);
    expect(all.find((s) => s.attributes['gen_ai.tool.call.id'] === 't_93')!.status.code).toBe(2);
    expect(all.find((s) => s.attributes['gen_ai.tool.call.id'] === 't_92')!.status.message).toBe('tool_denied');
    const r44 = byRun('r_0044')!;
    expect(r44.attributes['aep.outcome']).toBe('cancelled');
    expect(all.find((s) => s.attributes['aep.attention.request_id'] === '01JX9YBQARQ20000000000GOLD')!.parentSpanId).toBe(r44.spanId);
    // a form with no run: a card in a trace of its own
    const form = all.find((s) => s.name === 'attention form')!;
    expect(form.parentSpanId).toBeUndefined();
    // two emitters' s_shared are two sessions: two root spans in two traces, each with its real session and source
    const shared = all.filter((s) => s.attributes['aep.session_id'] === 's_shared');
    expect(shared.map((s) => s.name).sort()).toEqual(['invoke_agent alpha-agent', 'invoke_agent beta-agent']);
    expect(new Set(shared.map((s) => s.traceId)).size).toBe(2);
    expect(new Set(shared.map((s) => s.attributes['aep.source'])).size).toBe(2);
    // the lane key never leaks into an attribute
    expect(JSON.stringify(all.map((s) => s.attributes))).not.toContain('\\u0000');
  });
});
