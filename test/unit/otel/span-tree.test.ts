import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { mirroredDaemon, ms } from '../../support/otel-harness.js';
import { scriptedSession } from '../../support/scripted-session.js';
import type { AepEvent } from '../../../src/aep/event.js';

describe('the span tree of the scripted session (in-memory exporter)', () => {
  const script = scriptedSession();
  let h: Awaited<ReturnType<typeof mirroredDaemon>>;
  let spans: ReadableSpan[];
  let events: AepEvent[];
  const byName = (name: string) => spans.filter((s) => s.name === name);
  const idOf = (s: ReadableSpan) => s.spanContext().spanId;

  beforeAll(async () => {
    h = await mirroredDaemon();
    await h.feed(script.envelopes);
    spans = h.spans();
    events = h.memory.events;
  });
  afterAll(async () => {
    await h.app.close();
    await h.mirror.shutdown();
  });

  it('one root per turn, each in a trace of its own, named and attributed per the GenAI conventions', () => {
    const roots = byName('invoke_agent hermes');
    expect(roots).toHaveLength(2);
    expect(new Set(roots.map((r) => r.spanContext().traceId)).size).toBe(2);
    for (const [i, r] of roots.entries()) {
      expect(r.parentSpanContext).toBeUndefined();
      expect(r.attributes).toMatchObject({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'hermes',
        'gen_ai.conversation.id': script.session,
        'aep.session_id': script.session,
        'aep.run_id': script.turns[i],
      });
    }
    for (const r of roots) expect(r.attributes).toMatchObject({ 'gen_ai.request.model': 'hermes-4', 'hermes.platform': 'cli' });
    // the provider of each turn's first model call (turn 2 also fails one: the same provider)
    expect(roots.map((r) => r.attributes['gen_ai.provider.name'])).toEqual(['custom', 'custom']);
    expect(roots[0]!.status.code).toBe(SpanStatusCode.UNSET);
    // an interrupted turn is cancelled, not failed
    expect(roots[1]!.status.code).toBe(SpanStatusCode.UNSET);
    expect(roots[1]!.attributes).toMatchObject({ 'aep.outcome': 'cancelled', 'aep.cancelled_by': 'user' });
  });

  it('consecutive runs of the session are linked', () => {
    const [r1, r2] = byName('invoke_agent hermes');
    expect(r2!.links.map((l) => [l.context.spanId, l.attributes?.['aep.link.type']])).toContainEqual([idOf(r1!), 'previous_run']);
  });

  it('tool spans are children of their run with the tool attributes and statuses', () => {
    const [r1, r2] = byName('invoke_agent hermes');
    const tools = spans.filter((s) => s.name.startsWith('execute_tool '));
    expect(tools.map((t) => [t.name, t.attributes['gen_ai.tool.call.id'], t.parentSpanContext?.spanId])).toEqual([
      ['execute_tool terminal', 'call_ok', idOf(r1!)],
      ['execute_tool read_file', 'call_err', idOf(r1!)],
      ['execute_tool terminal', 'call_rm', idOf(r1!)],
      ['execute_tool clarify', 'call_ask', idOf(r1!)],
      ['execute_tool delegate_task', 'call_sub', idOf(r1!)],
      ['execute_tool terminal', 'call_blk', idOf(r2!)],
      ['execute_tool terminal', 'call_rm2', idOf(r2!)],
      ['execute_tool clarify', 'call_ask2', idOf(r2!)],
    ]);
    const get = (id: string) => tools.find((t) => t.attributes['gen_ai.tool.call.id'] === id)!;
    expect(get('call_ok').attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.type': 'function', 'aep.outcome': 'completed' });
    expect([get('call_err').status.code, get('call_err').attributes['error.type']]).toEqual([SpanStatusCode.ERROR, 'tool_error']);
    expect([get('call_blk').status.code, get('call_blk').attributes['error.type'], get('call_blk').attributes['aep.denied_by']]).toEqual([
      SpanStatusCode.ERROR,
      'tool_denied',
      'policy',
    ]);
    // the hanging clarify never got its post: closed by the session's end, marked
    expect(get('call_ask2').attributes).toMatchObject({ 'aep.incomplete': true, 'aep.incomplete.reason': 'session_ended' });
  });

  it('attention cards: the clarify form under its tool, approvals under their run, with resolution and wait', () => {
    const cards = spans.filter((s) => s.name.startsWith('attention '));
    const form = cards.find((c) => c.attributes['aep.attention.kind'] === 'form' && c.attributes['aep.attention.resolution'] === 'answered')!;
    const askTool = spans.find((s) => s.attributes['gen_ai.tool.call.id'] === 'call_ask')!;
    expect(form.parentSpanContext?.spanId).toBe(idOf(askTool));
    expect(form.attributes).toMatchObject({ 'aep.attention.respond_via': ['oob'], 'aep.attention.answered_via': 'oob' });
    const approvals = cards.filter((c) => c.attributes['aep.attention.kind'] === 'permission');
    expect(approvals.map((a) => a.attributes['aep.attention.answer.option'])).toEqual(['once', 'deny']);
    const [r1, r2] = byName('invoke_agent hermes');
    expect(approvals.map((a) => a.parentSpanContext?.spanId)).toEqual([idOf(r1!), idOf(r2!)]);
    for (const a of approvals) expect(a.attributes['aep.attention.latency_ms']).toBeTypeOf('number');
    const dismissed = cards.find((c) => c.attributes['aep.attention.resolution'] === 'dismissed')!;
    expect(dismissed.attributes['aep.incomplete']).toBeUndefined();
  });

  it('the delegation span is a child of the parent turn', () => {
    const [d] = byName('invoke_agent hermes.subagent');
    expect(d!.parentSpanContext?.spanId).toBe(idOf(byName('invoke_agent hermes')[0]!));
    expect(d!.attributes).toMatchObject({ 'aep.delegation.child_session_id': `${script.session}_sub1`, 'hermes.child_status': 'completed' });
  });

  it('chat spans: one per model call, a child of its turn, timed by the call itself, the usage Hermes reported', () => {
    const [r1, r2] = byName('invoke_agent hermes');
    const chats = spans.filter((s) => s.name.startsWith('chat '));
    expect(chats.map((c) => [c.name, c.parentSpanContext?.spanId, c.attributes['hermes.api_call']])).toEqual([
      ['chat hermes-4', idOf(r1!), 1],
      ['chat hermes-4', idOf(r1!), 2],
      ['chat hermes-4', idOf(r2!), 1],
    ]);
    for (const c of chats) expect(c.spanContext().traceId).toBe(c.parentSpanContext?.traceId);
    // started_at / ended_at as Hermes measured them (epoch seconds), not the hook's arrival
    expect(chats.map((c) => [ms(c.startTime), ms(c.endTime)])).toEqual([
      [1795946100500, 1795946101750],
      [1795946160250, 1795946161500],
      [1795946200000, 1795946201250],
    ]);
    expect(chats[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'custom',
      'gen_ai.request.model': 'hermes-4',
      'gen_ai.response.model': 'hermes-4-0521',
      'gen_ai.response.finish_reasons': ['tool_calls'],
      // Hermes's uncached 900 + cache read 300 + cache write 100
      'gen_ai.usage.input_tokens': 1300,
      'gen_ai.usage.output_tokens': 40,
      'gen_ai.usage.cache_read.input_tokens': 300,
      'gen_ai.usage.cache_creation.input_tokens': 100,
      'gen_ai.usage.reasoning.output_tokens': 8,
      'server.address': '127.0.0.1',
      'server.port': 8080,
      'session.id': script.session,
    });
    // no pricer in this harness: no cost anywhere, never a guess
    for (const s of spans) expect(s.attributes['aep.cost.usd']).toBeUndefined();
    // the turn carries the sum over its model calls: (900+400) + (1800+400), 40 + 80
    expect(r1!.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 3500, 'gen_ai.usage.output_tokens': 120, 'gen_ai.usage.cache_read.input_tokens': 600 });
    // the tool call the first model call asked for links to it
    const ok = spans.find((s) => s.attributes['gen_ai.tool.call.id'] === 'call_ok')!;
    expect(ok.links.map((l) => [l.context.spanId, l.attributes?.['aep.link.type']])).toContainEqual([idOf(chats[0]!), 'model_call']);
  });

  it('span times are the AEP event times, and every event of a unit is a span event on it', () => {
    const evById = new Map(events.map((e) => [e.id, e]));
    for (const s of spans) {
      // a chat span is timed by its model call (above)
      if (s.name.startsWith('chat ')) continue;
      expect(s.events.length).toBeGreaterThan(0);
      for (const se of s.events) {
        const ev = evById.get(se.attributes!['aep.event_id'] as string)!;
        expect(se.name).toBe(ev.type);
        expect(se.attributes!['aep.sequence']).toBe(ev.seq);
        expect(ms(se.time)).toBe(Date.parse(ev.time));
      }
      const first = evById.get(s.events[0]!.attributes!['aep.event_id'] as string)!;
      const last = evById.get(s.events.at(-1)!.attributes!['aep.event_id'] as string)!;
      expect(s.kind).toBe(SpanKind.INTERNAL);
      expect(ms(s.startTime)).toBe(Date.parse(first.time));
      // a unit ends at its terminal; one closed by the session's end, at that end
      const end =
        s.attributes['aep.incomplete.reason'] === 'session_ended' ? events.find((e) => e.type === 'session.ended' && e.session === first.session)! : last;
      expect(ms(s.endTime)).toBe(Date.parse(end.time));
    }
  });

  it('every AEP event with a unit carries the traceparent of its span', () => {
    const spanOfEvent = new Map<string, ReadableSpan>();
    for (const s of spans) for (const se of s.events) spanOfEvent.set(se.attributes!['aep.event_id'] as string, s);
    const unspanned: string[] = [];
    for (const ev of events) {
      const s = spanOfEvent.get(ev.id);
      if (!s) {
        expect(ev.traceparent).toBeUndefined();
        unspanned.push(ev.type);
        continue;
      }
      const c = s.spanContext();
      expect(ev.traceparent).toBe(`00-${c.traceId}-${c.spanId}-01`);
    }
    // only session-scoped events belong to no unit
    expect(unspanned.sort()).toEqual(['session.ended', 'session.ended', 'session.started', 'x.hermes.session.reset']);
  });

  it('cause links cross units: the approval answer chain stays inside its card; no link duplicates a parent', () => {
    for (const s of spans) {
      for (const l of s.links) expect(l.context.spanId).not.toBe(s.parentSpanContext?.spanId);
      expect(new Set(s.links.map((l) => l.context.spanId)).size).toBe(s.links.length);
    }
    expect(new Set(spans.map((s) => s.spanContext().spanId)).size).toBe(spans.length);
  });
});
