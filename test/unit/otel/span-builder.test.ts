import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SpanBuilder } from '../../../src/otel/span-builder.js';
import { FileSpanExporter } from '../../../src/otel/file-span-exporter.js';
import { toReadableSpan } from '../../../src/otel/readable-span.js';
import { samplerFromEnv } from '../../../src/otel/sampler.js';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { AepEvent } from '../../../src/aep/event.js';
import type { AepType } from '../../../src/aep/lifecycle.js';
import { tempDir } from '../../support/processes.js';

let n = 0;
const ev = (type: AepType, over: Partial<AepEvent> & { t: number }): AepEvent =>
  ({
    aep: '0.1',
    id: `e${++n}`,
    type,
    time: new Date(over.t).toISOString(),
    source: 'aep://h/agent/hermes/session/s',
    agent: 'hermes',
    session: 's',
    seq: n,
    epoch: 0,
    severity: 'info',
    capture: 'metadata',
    data: {},
    ...over,
  }) as AepEvent;

describe('span builder', () => {
  const always = () => true;

  it('a unit whose terminal never comes is closed by the idle sweep, marked incomplete, and forgotten', () => {
    const b = new SpanBuilder({ sampler: always, ceiling: 'metadata' });
    b.accept(ev('run.started', { t: 1000, run: 'r1' }));
    b.accept(ev('tool.requested', { t: 2000, run: 'r1', data: { tool: { name: 'terminal', call_id: 'c1' } } }));
    // the run is quiet but its session is not: nothing closes
    expect(b.sweep(2500, 1000)).toEqual([]);
    const closed = b.sweep(10_000, 1000);
    expect(closed.map((s) => [s.name, s.attributes['aep.incomplete.reason'], s.endMs])).toEqual([
      ['invoke_agent hermes', 'idle', 1000],
      ['execute_tool terminal', 'idle', 2000],
    ]);
    expect(b.openUnits).toBe(0);
  });

  it('open units are bounded: the oldest is evicted as incomplete', () => {
    const b = new SpanBuilder({ sampler: always, ceiling: 'metadata', maxOpenUnits: 10 });
    const finished = [];
    for (let i = 0; i < 25; i++) finished.push(...b.accept(ev('run.started', { t: i, run: `r${i}`, session: `s${i}` })).finished);
    expect(b.openUnits).toBe(10);
    expect(finished).toHaveLength(15);
    expect(finished.every((s) => s.attributes['aep.incomplete.reason'] === 'evicted')).toBe(true);
    expect(b.counters.evicted).toBe(15);
  });

  it('a reused call id makes a second tool span with its own id', () => {
    const b = new SpanBuilder({ sampler: always, ceiling: 'metadata' });
    b.accept(ev('run.started', { t: 0, run: 'r1' }));
    const spans = [];
    for (const t of [1, 3]) {
      b.accept(ev('tool.requested', { t, run: 'r1', data: { tool: { name: 'git', call_id: 'same' } } }));
      spans.push(...b.accept(ev('tool.completed', { t: t + 1, run: 'r1', data: { tool: { name: 'git', call_id: 'same' } } })).finished);
    }
    expect(spans).toHaveLength(2);
    expect(spans[0]!.spanId).not.toBe(spans[1]!.spanId);
    expect(b.counters.late).toBe(0);
  });

  it('a unit closed idle is never spanned twice: its late terminal is counted, not re-exported', () => {
    const b = new SpanBuilder({ sampler: always, ceiling: 'metadata' });
    b.accept(ev('run.started', { t: 0, run: 'r1' }));
    b.accept(ev('tool.requested', { t: 1, run: 'r1', data: { tool: { name: 'make', call_id: 'c1' } } }));
    expect(b.sweep(10_000, 1000)).toHaveLength(2);
    expect(b.accept(ev('tool.completed', { t: 20_000, run: 'r1', data: { tool: { name: 'make', call_id: 'c1' } } })).finished).toEqual([]);
    expect(b.accept(ev('run.finished', { t: 20_001, run: 'r1' })).finished).toEqual([]);
    expect(b.counters.late).toBe(2);
  });

  it('a new turn of a session closes an older turn left open (a failed model call ends a turn without on_session_end)', () => {
    const b = new SpanBuilder({ sampler: always, ceiling: 'metadata' });
    b.accept(ev('run.started', { t: 0, run: 'r1' }));
    b.accept(ev('tool.requested', { t: 1, run: 'r1', data: { tool: { name: 'x', call_id: 'c1' } } }));
    const { finished } = b.accept(ev('run.started', { t: 5, run: 'r2' }));
    expect(finished.map((s) => [s.name, s.attributes['aep.incomplete.reason']])).toEqual([
      ['execute_tool x', 'superseded'],
      ['invoke_agent hermes', 'superseded'],
    ]);
    expect(b.openUnits).toBe(1);
  });

  it("a tool outcome riding on its run (no call id, e.g. at capture none) does not change the run's status", () => {
    const b = new SpanBuilder({ sampler: always, ceiling: 'metadata' });
    b.accept(ev('run.started', { t: 0, run: 'r1' }));
    b.accept(ev('tool.failed', { t: 1, run: 'r1', data: {} }));
    const [run] = b.accept(ev('run.finished', { t: 2, run: 'r1' })).finished;
    expect([run!.status.code, run!.attributes['error.type'], run!.events.map((e) => e.name)]).toEqual([
      'unset',
      undefined,
      ['run.started', 'tool.failed', 'run.finished'],
    ]);
  });

  it('a terminal whose start was never seen still yields one span, flagged start-unknown', () => {
    const b = new SpanBuilder({ sampler: always, ceiling: 'metadata' });
    const { finished } = b.accept(ev('run.finished', { t: 5000, run: 'r9' }));
    expect(finished.map((s) => [s.attributes['aep.start_unknown'], s.startMs, s.endMs])).toEqual([[true, 5000, 5000]]);
  });

  it('sampling is decided per trace: every span of a turn shares the root decision', () => {
    const sampler = samplerFromEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' });
    const b = new SpanBuilder({ sampler, ceiling: 'metadata' });
    const decisions = new Map<string, Set<boolean>>();
    for (let i = 0; i < 200; i++) {
      const out = [
        ...b.accept(ev('run.started', { t: i, run: `r${i}` })).finished,
        ...b.accept(ev('tool.requested', { t: i, run: `r${i}`, data: { tool: { name: 'x', call_id: `c${i}` } } })).finished,
        ...b.accept(ev('tool.completed', { t: i, run: `r${i}`, data: { tool: { name: 'x', call_id: `c${i}` } } })).finished,
        ...b.accept(ev('run.finished', { t: i, run: `r${i}` })).finished,
      ];
      for (const s of out) decisions.set(s.traceId, (decisions.get(s.traceId) ?? new Set()).add(s.sampled));
    }
    const flags = [...decisions.values()];
    expect(flags.every((f) => f.size === 1)).toBe(true);
    const kept = flags.filter((f) => f.has(true)).length;
    expect(kept).toBeGreaterThan(50);
    expect(kept).toBeLessThan(150);
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'always_off' })('0af7651916cd43dd8448eb211c80319c')).toBe(false);
  });

  it('the file exporter writes one OTLP/JSON request per line, replayable by otlp_json_file', async () => {
    const file = path.join(tempDir(), 'otel', 'spans.jsonl');
    const exp = new FileSpanExporter(file);
    const b = new SpanBuilder({ sampler: always, ceiling: 'metadata' });
    b.accept(ev('run.started', { t: 1000, run: 'r1' }));
    const [span] = b.accept(ev('run.finished', { t: 2000, run: 'r1' })).finished;
    const rs = toReadableSpan(span!, resourceFromAttributes({ 'service.name': 't' }), { name: 'hermes-aep' });
    for (let i = 0; i < 2; i++) await new Promise<void>((r) => exp.export([rs], () => r()));
    await exp.shutdown();
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2);
    const doc = JSON.parse(lines[0]!);
    expect(doc.resourceSpans[0].scopeSpans[0].spans[0]).toMatchObject({ name: 'invoke_agent hermes', traceId: span!.traceId, spanId: span!.spanId });
  });

  it('the file exporter appends batches in export order, rotates once past its byte bound, and refuses after shutdown', async () => {
    const file = path.join(tempDir(), 'otel', 'spans.jsonl');
    const b = new SpanBuilder({ sampler: always, ceiling: 'metadata' });
    const spans = [1, 2, 3].map((i) => {
      b.accept(ev('run.started', { t: i * 1000, run: `r${i}` }));
      const [span] = b.accept(ev('run.finished', { t: i * 1000 + 1, run: `r${i}` })).finished;
      return toReadableSpan(span!, resourceFromAttributes({ 'service.name': 't' }), { name: 'hermes-aep' });
    });
    const exp = new FileSpanExporter(file, 1);
    // not awaited one by one: the exporter itself keeps them in order
    const codes = spans.map((rs) => new Promise<number>((r) => exp.export([rs], (res) => r(res.code))));
    await exp.forceFlush();
    expect(await Promise.all(codes)).toEqual([0, 0, 0]);
    const runOf = (line: string) =>
      (JSON.parse(line) as { resourceSpans: { scopeSpans: { spans: { spanId: string }[] }[] }[] }).resourceSpans[0]!.scopeSpans[0]!.spans[0]!.spanId;
    // a bound of one byte: every batch after the first rotates the file, so `.1` holds the second and the file the third
    expect(runOf(readFileSync(`${file}.1`, 'utf8').trim())).toBe(spans[1]!.spanContext().spanId);
    expect(runOf(readFileSync(file, 'utf8').trim())).toBe(spans[2]!.spanContext().spanId);
    await exp.shutdown();
    expect(await new Promise<number>((r) => exp.export([spans[0]!], (res) => r(res.code)))).toBe(1);
  });
});

describe('cause links across units', () => {
  it('an event caused by an event of ANOTHER unit links its span to the cause span (not to its parent)', () => {
    const b = new SpanBuilder({ sampler: () => true, ceiling: 'metadata' });
    b.accept(ev('run.started', { t: 0, run: 'r1' }));
    b.accept(ev('tool.requested', { t: 1, run: 'r1', data: { tool: { name: 'terminal', call_id: 'c1' } } }));
    // a gate card raised for the call, answered; the denial that follows is caused by the card's answer
    const card = ev('attention.requested', { t: 2, run: 'r1', data: { kind: 'permission' } });
    b.accept(card);
    const answer = ev('attention.answered', { t: 3, run: 'r1', subject: card.id, data: { answer: { option: 'deny' } } });
    b.accept(answer);
    const cardSpan = b.accept(ev('attention.resolved', { t: 4, run: 'r1', subject: card.id, cause: answer.id, data: { resolution: 'answered' } })).finished[0]!;
    const [toolSpan] = b.accept(
      ev('tool.denied', { t: 5, run: 'r1', cause: answer.id, data: { tool: { name: 'terminal', call_id: 'c1' }, by: 'policy' } }),
    ).finished;
    expect(toolSpan!.links).toEqual([
      { traceId: cardSpan.traceId, spanId: cardSpan.spanId, sampled: true, attributes: { 'aep.link.type': 'cause', 'aep.cause_event_id': answer.id } },
    ]);
    // the card's own chain (answered → resolved) stays inside the card: no self link
    expect(cardSpan.links).toEqual([]);
  });
});

describe('attention card outcomes', () => {
  const card = (b: SpanBuilder, via: string, cause: string) => {
    b.accept(ev('run.started', { t: 0, run: 'r1' }));
    const requested = ev('attention.requested', { t: 1, run: 'r1', data: { kind: 'permission', respond_via: [via] } });
    b.accept(requested);
    const answered = ev('attention.answered', { t: 2, run: 'r1', subject: requested.id, cause, data: { answer: { option: 'allow' }, via } });
    b.accept(answered);
    const resolved = ev('attention.resolved', { t: 3, run: 'r1', subject: requested.id, cause: answered.id, data: { resolution: 'answered', latency_ms: 2 } });
    return { requested, span: b.accept(resolved).finished[0]! };
  };

  it('an answer over control names its command on the card span (the answer’s cause); an answer from elsewhere names none', () => {
    const control = card(new SpanBuilder({ sampler: () => true, ceiling: 'metadata' }), 'control', 'cmd-01');
    expect(control.span.attributes).toMatchObject({ 'aep.attention.answered_via': 'control', 'aep.control.command_id': 'cmd-01' });
    // a vendor channel's answer is caused by the card itself: that is no command
    const b = new SpanBuilder({ sampler: () => true, ceiling: 'metadata' });
    b.accept(ev('run.started', { t: 0, run: 'r1' }));
    const requested = ev('attention.requested', { t: 1, run: 'r1', data: { kind: 'approval' } });
    b.accept(requested);
    b.accept(ev('attention.answered', { t: 2, run: 'r1', subject: requested.id, cause: requested.id, data: { answer: { option: 'once' }, via: 'cli' } }));
    const [span] = b.accept(ev('attention.resolved', { t: 3, run: 'r1', subject: requested.id, data: { resolution: 'answered' } })).finished;
    expect(span!.attributes['aep.attention.answered_via']).toBe('cli');
    expect(span!.attributes).not.toHaveProperty('aep.control.command_id');
  });
});
