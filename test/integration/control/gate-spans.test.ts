import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir, waitFor } from '../../support/processes.js';
import type { WsConsumer } from '../../support/aep-stream-client.js';
import { acksOf, commandOf, events, HOLD, hook, operator, postHook, STEER, startRig, type Rig } from '../../support/control-rig.js';
import { decodeResourceSpans, type DecodedSpan } from '../../support/otlp-json.js';

/*
 * The control gate as the OpenTelemetry mirror shows it, from the REAL daemon
 * in process (the control rig), its spans read back from its file exporter:
 * the card is an `attention permission` span under the held call's tool span,
 * the decision, the channel, the wait and the answering command are its
 * attributes; acks ride on no span; steering audits ride on their run.
 */

/** planted in what an operator types: a deny reason, a free-text answer, an instruction */
const REASON = 'PLANTEDxGATExREASON';
const FREE_TEXT = 'PLANTEDxGATExFREETEXT looks risky';
const INSTRUCTION = 'PLANTEDxSTEERxTEXT keep the diff small';
const MARKERS = ['PLANTEDxGATExREASON', 'PLANTEDxGATExFREETEXT', 'PLANTEDxSTEERxTEXT'];

interface Mirrored {
  rig: Rig;
  spans: DecodedSpan[];
  /** every exported byte */
  text: string;
}

/** A rig with the gates and the mirror on (file exporter, no batching delay); `run` drives it, then it stops and its spans are read. */
async function mirrored(env: Record<string, string>, run: (rig: Rig, op: WsConsumer) => Promise<void>): Promise<Mirrored> {
  const file = path.join(tempDir('aep-gate-spans-'), 'spans.jsonl');
  const rig = await startRig({ AEP_HERMES_CONTROL: '1', OTEL_TRACES_EXPORTER: 'file', AEP_OTEL_FILE: file, OTEL_BSP_SCHEDULE_DELAY: '0', ...env });
  const op = await operator(rig);
  try {
    await run(rig, op);
  } finally {
    op.close();
    // a graceful stop exports every finished span
    await rig.close();
  }
  const text = readFileSync(file, 'utf8');
  const spans = text
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => decodeResourceSpans((JSON.parse(l) as { resourceSpans: unknown[] }).resourceSpans));
  return { rig, spans, text };
}

const sock = (r: Rig) => r.env['AEP_SOCKET']!;
const ok = async (r: Rig, body: string, headers: Record<string, string> = {}) => expect((await postHook(sock(r), body, headers)).status).toBe(200);

/** a session with an open turn, then one held pre_tool_call: its pending reply and its card (as the stream delivered it) */
async function heldCall(r: Rig, op: WsConsumer, session: string, call: string, o: { signal?: AbortSignal; opened?: boolean } = {}) {
  if (!o.opened) for (const h of ['on_session_start', 'pre_llm_call']) await ok(r, hook(h, session));
  const signal = o.signal;
  const reply = postHook(sock(r), hook('pre_tool_call', session, { call, tool: 'terminal' }), HOLD, signal);
  const card = await waitFor('the gate card', () => events(op).find((e) => e['type'] === 'attention.requested' && e['session'] === session));
  return { reply, card };
}

async function ackOf(op: WsConsumer, cmd: Record<string, unknown>): Promise<Record<string, any>> {
  const id = cmd['id'] as string;
  const [line] = await waitFor('the ack', () => (acksOf(op, id).length ? acksOf(op, id) : undefined));
  return JSON.parse(line!) as Record<string, any>;
}

const respond = (session: string, cardId: string, answer: Record<string, unknown>) =>
  commandOf('control.attention.respond', session, { answer }, { subject: cardId });

/** Hermes's post_tool_call for a call the gate blocked: status blocked, the block message as its error */
function blockedPost(session: string, call: string, message: string): string {
  const post = JSON.parse(hook('post_tool_call', session, { call })) as Record<string, any>;
  post['extra'] = { ...post['extra'], status: 'blocked', error_type: 'plugin_block', error_message: message, result: JSON.stringify({ error: message }) };
  return JSON.stringify(post);
}

/** A gated session answered `answer`, its post as Hermes reports it, its turn and session ended. */
async function answeredSession(r: Rig, op: WsConsumer, session: string, answer: Record<string, unknown>, post: (s: string) => string) {
  const { reply, card } = await heldCall(r, op, session, 'call_1');
  const cmd = respond(session, card['id'], answer);
  op.send(cmd);
  const released = await reply;
  await ok(r, post(session));
  await ok(r, hook('on_session_end', session));
  await ok(r, hook('on_session_finalize', session));
  return { cmd, card, released };
}

/** the spans of one session, by kind */
function spansOf(m: Mirrored, session: string) {
  const own = m.spans.filter((s) => s.attributes['aep.session_id'] === session);
  const tool = (call: string) => own.find((s) => s.name === 'execute_tool terminal' && s.attributes['gen_ai.tool.call.id'] === call);
  return { own, runs: own.filter((s) => s.name === 'invoke_agent hermes'), cards: own.filter((s) => s.name === 'attention permission'), tool };
}

/** The card span is a child of the held call's tool span, which is a child of its run; returns the three. */
function cardUnderTool(m: Mirrored, session: string, call: string, cardId: string) {
  const { runs, cards, tool } = spansOf(m, session);
  const card = cards.find((c) => c.attributes['aep.attention.request_id'] === cardId);
  const t = tool(call);
  expect(card, 'the card span').toBeDefined();
  expect(t, 'the held call’s tool span').toBeDefined();
  expect(card!.traceId).toBe(t!.traceId);
  expect(card!.parentSpanId).toBe(t!.spanId);
  const run = runs.find((r) => r.spanId === t!.parentSpanId);
  expect(run, 'the tool span’s run').toBeDefined();
  expect(card!.attributes).toMatchObject({ 'aep.attention.kind': 'permission', 'aep.attention.respond_via': ['control'], 'aep.attention.options': 2 });
  return { card: card!, tool: t!, run: run! };
}

const history = (r: Rig, session: string, type: string) => r.history(session).find((e) => e['type'] === type)!;
const nsToMs = (ns: string) => Number(BigInt(ns) / 1_000_000n);

describe('the control gate in the OTel mirror: answered cards, acks and steering (default capture)', () => {
  const s = {
    allow: '20261201_120000_span1',
    deny: '20261201_120000_span2',
    text: '20261201_120000_span3',
    steer: '20261201_120000_span4',
    late: '20261201_120000_span5',
  };
  let m: Mirrored;
  const got: Record<string, Awaited<ReturnType<typeof answeredSession>>> = {};
  const cmds: Record<string, Record<string, unknown>> = {};

  beforeAll(async () => {
    m = await mirrored({ AEP_INSTRUCT: '1' }, async (r, op) => {
      got['allow'] = await answeredSession(r, op, s.allow, { option: 'allow' }, (x) => hook('post_tool_call', x, { call: 'call_1' }));
      got['deny'] = await answeredSession(r, op, s.deny, { option: 'deny', text: REASON }, (x) => blockedPost(x, 'call_1', REASON));
      got['text'] = await answeredSession(r, op, s.text, { text: FREE_TEXT }, (x) => blockedPost(x, 'call_1', FREE_TEXT));
      // steering: one instruction delivered at turn 2, a nack, an ack for one dropped after the turn ended, one dropped mid-turn
      const st = s.steer;
      await ok(r, hook('on_session_start', st));
      await ok(r, hook('pre_llm_call', st, { turn: `${st}:t:1` }));
      cmds['delivered'] = commandOf('x.hermes.control.instruct', st, { text: INSTRUCTION });
      op.send(cmds['delivered']);
      expect(await ackOf(op, cmds['delivered'])).toMatchObject({ type: 'control.accepted' });
      await ok(r, hook('on_session_end', st, { turn: `${st}:t:1` }));
      const steered = await postHook(sock(r), hook('pre_llm_call', st, { turn: `${st}:t:2` }), STEER);
      expect(JSON.parse(steered.body)).toEqual({ context: INSTRUCTION });
      cmds['cancel'] = commandOf('control.cancel', st, { scope: 'run' });
      cmds['stray'] = respond(st, 'no-such-card', { option: 'deny', text: REASON });
      for (const c of [cmds['cancel'], cmds['stray']]) {
        op.send(c);
        expect(await ackOf(op, c)).toMatchObject({ type: 'control.rejected' });
      }
      // queued during turn 2, never delivered: dropped at the session end while turn 2 is still open
      cmds['dropped'] = commandOf('x.hermes.control.instruct', st, { text: INSTRUCTION });
      op.send(cmds['dropped']);
      await ackOf(op, cmds['dropped']);
      // Hermes ends the session inside turn 2 (its finalize names the turn)
      await ok(r, hook('on_session_finalize', st, { turn: `${st}:t:2` }));
      // queued after the session's last turn ended: dropped at its end, with no run open to ride on
      await ok(r, hook('on_session_start', s.late));
      await ok(r, hook('pre_llm_call', s.late));
      await ok(r, hook('on_session_end', s.late));
      cmds['late'] = commandOf('x.hermes.control.instruct', s.late, { text: INSTRUCTION });
      op.send(cmds['late']);
      await ackOf(op, cmds['late']);
      await ok(r, hook('on_session_finalize', s.late));
    });
  });

  it('allow: the card span under the held tool span carries the decision, control as the channel, the wait, and the command that answered', () => {
    const { cmd, card, released } = got['allow']!;
    expect(released.body).toBe('{}');
    const spans = cardUnderTool(m, s.allow, 'call_1', card['id']);
    const resolved = history(m.rig, s.allow, 'attention.resolved');
    expect(spans.card.attributes).toMatchObject({
      'aep.attention.answer.option': 'allow',
      'aep.attention.answered_via': 'control',
      'aep.attention.resolution': 'answered',
      'aep.attention.latency_ms': resolved['data']['latency_ms'],
      'aep.control.command_id': cmd['id'],
    });
    expect(spans.card.status.code ?? 0).toBe(0);
    // the call proceeded: its tool span ends completed
    expect(spans.tool.attributes['aep.outcome']).toBe('completed');
    expect(spans.tool.events.at(-1)!.name).toBe('tool.completed');
  });

  it('the command and the answer are linked by cause: the answered span event names the command, the resolution names the answer', () => {
    const { cmd, card } = got['allow']!;
    const { card: span } = cardUnderTool(m, s.allow, 'call_1', card['id']);
    expect(span.events.map((e) => e.name)).toEqual(['attention.requested', 'attention.answered', 'attention.resolved']);
    const [requested, answered, resolved] = span.events;
    const hist = m.rig.history(s.allow);
    expect(requested!.attributes['aep.cause']).toBe(history(m.rig, s.allow, 'tool.requested')['id']);
    expect(answered!.attributes).toMatchObject({ 'aep.event_id': history(m.rig, s.allow, 'attention.answered')['id'], 'aep.cause': cmd['id'] });
    expect(resolved!.attributes['aep.cause']).toBe(answered!.attributes['aep.event_id']);
    // the command itself is in the history (seq-less), never a span or a span event: it has no span to link to
    expect(hist.find((e) => e['id'] === cmd['id'])).toMatchObject({ type: 'control.attention.respond' });
    expect(m.spans.flatMap((x) => x.events).some((e) => e.attributes['aep.event_id'] === cmd['id'])).toBe(false);
    expect(span.links).toEqual([]);
    // the card's traceparent in the history is the card span
    expect(history(m.rig, s.allow, 'attention.answered')['traceparent']).toBe(`00-${span.traceId}-${span.spanId}-01`);
  });

  it('deny (with a reason, and as free text): the card records deny via control; the held tool span ends tool.denied from Hermes’s blocked post', () => {
    for (const [session, key] of [
      [s.deny, 'deny'],
      [s.text, 'text'],
    ] as const) {
      const { cmd, card, released } = got[key]!;
      expect(JSON.parse(released.body)).toMatchObject({ action: 'block' });
      const spans = cardUnderTool(m, session, 'call_1', card['id']);
      expect(spans.card.attributes).toMatchObject({
        'aep.attention.answer.option': 'deny',
        'aep.attention.answered_via': 'control',
        'aep.attention.resolution': 'answered',
        'aep.attention.latency_ms': history(m.rig, session, 'attention.resolved')['data']['latency_ms'],
        'aep.control.command_id': cmd['id'],
      });
      expect(spans.tool.attributes).toMatchObject({ 'aep.outcome': 'denied', 'error.type': 'tool_denied', 'aep.denied_by': 'policy' });
      expect(spans.tool.status).toMatchObject({ code: 2, message: 'tool_denied' });
      expect(spans.tool.events.at(-1)!.name).toBe('tool.denied');
      expect(spans.tool.attributes['aep.incomplete']).toBeUndefined();
      // the card span ends at the answer, inside its tool span
      expect(nsToMs(spans.card.endTimeUnixNano)).toBeLessThanOrEqual(nsToMs(spans.tool.endTimeUnixNano));
    }
  });

  it('acks ride on no span: control.accepted and control.rejected are session-scoped, their decisions already on the card (or the audits)', () => {
    // the daemon did emit them, in the sessions' histories, each caused by its command
    const acks = Object.values(s).flatMap((x) => m.rig.history(x).filter((e) => e['type'] === 'control.accepted' || e['type'] === 'control.rejected'));
    expect(acks.filter((a) => a['type'] === 'control.accepted')).toHaveLength(6);
    expect(acks.filter((a) => a['type'] === 'control.rejected').map((a) => a['cause'])).toEqual([cmds['cancel']!['id'], cmds['stray']!['id']]);
    expect(acks.every((a) => a['traceparent'] === undefined)).toBe(true);
    const ackIds = new Set(acks.map((a) => a['id'] as string));
    for (const span of m.spans) {
      expect(span.name).not.toMatch(/^control/);
      for (const e of span.events) {
        expect(e.name).not.toMatch(/^control\./);
        expect(ackIds.has(e.attributes['aep.event_id'] as string)).toBe(false);
      }
    }
  });

  it('steering audits: delivered is a span event on the run it was delivered into, its aep.cause the instruct command; dropped rides on its run while that run is open, else on no span', () => {
    const { runs } = spansOf(m, s.steer);
    const turn2 = runs.find((r) => r.attributes['aep.run_id'] === `${s.steer}:t:2`)!;
    const delivered = turn2.events.filter((e) => e.name === 'x.hermes.instruction.delivered');
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.attributes).toMatchObject({ 'aep.cause': cmds['delivered']!['id'] });
    expect(delivered[0]!.attributes['aep.data']).toBeUndefined();
    const dropped = turn2.events.filter((e) => e.name === 'x.hermes.instruction.dropped');
    expect(dropped.map((e) => e.attributes['aep.cause'])).toEqual([cmds['dropped']!['id']]);
    // the session ended mid-turn: the run closes with it
    expect(turn2.attributes).toMatchObject({ 'aep.incomplete': true, 'aep.incomplete.reason': 'session_ended' });
    // and no span carries either audit as an attribute, nor a steering span of its own
    expect(runs.find((r) => r.attributes['aep.run_id'] === `${s.steer}:t:1`)!.events.map((e) => e.name)).toEqual(['run.started', 'run.finished']);
    expect(spansOf(m, s.steer).own.every((x) => x.name === 'invoke_agent hermes')).toBe(true);
    // a drop after the last turn ended is in the history, on no span (like any event whose run is closed)
    expect(history(m.rig, s.late, 'x.hermes.instruction.dropped')).toMatchObject({ cause: cmds['late']!['id'] });
    const late = spansOf(m, s.late).runs;
    expect(late).toHaveLength(1);
    expect(late[0]!.events.map((e) => e.name)).toEqual(['run.started', 'run.finished']);
    expect(m.spans.flatMap((x) => x.events).filter((e) => e.name === 'x.hermes.instruction.dropped')).toHaveLength(1);
  });

  it('planted markers: no deny reason, free-text answer or instruction text reaches any span attribute, span event or exported byte', () => {
    // the history does hold the reason (the attention category is kept at redacted): the mirror's ceiling is what stops it
    expect(JSON.stringify(history(m.rig, s.deny, 'attention.answered'))).toContain(REASON);
    for (const marker of MARKERS) expect(m.text).not.toContain(marker);
    expect(m.text).not.toContain('aep.data');
    for (const span of m.spans) {
      for (const v of Object.values(span.attributes)) for (const marker of MARKERS) expect(String(v)).not.toContain(marker);
      for (const e of span.events) expect(JSON.stringify(e.attributes)).not.toMatch(/PLANTEDx/);
    }
  });
});

describe('the control gate in the OTel mirror: cards nobody answered', () => {
  const s = { expired: '20261201_121000_span1', gone: '20261201_121000_span2' };
  let m: Mirrored;
  const cards: Record<string, Record<string, any>> = {};

  beforeAll(async () => {
    m = await mirrored({ AEP_ATTENTION_TIMEOUT_MS: '1000' }, async (r, op) => {
      const expired = await heldCall(r, op, s.expired, 'call_1');
      cards['expired'] = expired.card;
      // the call proceeds after the window, as with Hermes's own hook timeout
      expect((await expired.reply).body).toBe('{}');
      const abort = new AbortController();
      const gone = await heldCall(r, op, s.gone, 'call_1', { signal: abort.signal });
      cards['gone'] = gone.card;
      await new Promise((res) => setTimeout(res, 100));
      abort.abort();
      await gone.reply.catch(() => undefined);
      await waitFor('dismissed', () => r.history(s.gone).find((e) => e['type'] === 'attention.resolved'));
      for (const x of Object.values(s)) {
        await ok(r, hook('post_tool_call', x, { call: 'call_1' }));
        await ok(r, hook('on_session_end', x));
        await ok(r, hook('on_session_finalize', x));
      }
    });
  });

  it('expiry: resolution timeout and the wait (the timeout’s after_ms) on the card under its tool span; no decision, no channel, no command', () => {
    const { card, tool } = cardUnderTool(m, s.expired, 'call_1', cards['expired']!['id']);
    const timeout = history(m.rig, s.expired, 'attention.timeout');
    expect(timeout['data']['after_ms']).toBeGreaterThanOrEqual(1000);
    expect(card.attributes).toMatchObject({ 'aep.attention.resolution': 'timeout', 'aep.attention.latency_ms': timeout['data']['after_ms'] });
    for (const a of ['aep.attention.answer.option', 'aep.attention.answered_via', 'aep.control.command_id']) expect(card.attributes).not.toHaveProperty(a);
    expect(card.events.map((e) => e.name)).toEqual(['attention.requested', 'attention.timeout']);
    expect(card.attributes['aep.incomplete']).toBeUndefined();
    expect(tool.attributes['aep.outcome']).toBe('completed');
  });

  it('hook gone: resolution dismissed and the wait (how long the call was held) on the card under its tool span; no decision, no channel, no command', () => {
    const { card, tool } = cardUnderTool(m, s.gone, 'call_1', cards['gone']!['id']);
    const resolved = history(m.rig, s.gone, 'attention.resolved');
    expect(resolved['data']['latency_ms']).toBeGreaterThanOrEqual(100);
    expect(card.attributes).toMatchObject({ 'aep.attention.resolution': 'dismissed', 'aep.attention.latency_ms': resolved['data']['latency_ms'] });
    for (const a of ['aep.attention.answer.option', 'aep.attention.answered_via', 'aep.control.command_id']) expect(card.attributes).not.toHaveProperty(a);
    expect(card.events.map((e) => e.name)).toEqual(['attention.requested', 'attention.resolved']);
    expect(card.attributes['aep.incomplete']).toBeUndefined();
    expect(tool.attributes['aep.outcome']).toBe('completed');
  });
});

describe('the control gate in the OTel mirror: content the capture policy lets through (AEP_OTEL_CAPTURE=redacted)', () => {
  const s = '20261201_122000_span1';
  let m: Mirrored;

  beforeAll(async () => {
    m = await mirrored({ AEP_INSTRUCT: '1', AEP_OTEL_CAPTURE: 'redacted' }, async (r, op) => {
      const cmd = commandOf('x.hermes.control.instruct', s, { text: INSTRUCTION });
      await ok(r, hook('on_session_start', s));
      op.send(cmd);
      await ackOf(op, cmd);
      await ok(r, hook('pre_llm_call', s), STEER);
      const { reply, card } = await heldCall(r, op, s, 'call_2', { opened: true });
      op.send(respond(s, card['id'], { option: 'deny', text: REASON }));
      await reply;
      await ok(r, blockedPost(s, 'call_2', REASON));
      await ok(r, hook('on_session_end', s));
      await ok(r, hook('on_session_finalize', s));
    });
  });

  it('the deny reason rides only inside the answered span event’s aep.data (redacted), never a span attribute; the instruction text nowhere', () => {
    expect(m.text).toContain(REASON);
    expect(m.text).not.toContain('PLANTEDxSTEERxTEXT');
    const where: string[] = [];
    for (const span of m.spans) {
      for (const [k, v] of Object.entries(span.attributes)) if (String(v).includes(REASON)) where.push(`${span.name} ${k}`);
      for (const e of span.events)
        for (const [k, v] of Object.entries(e.attributes)) if (String(v).includes(REASON)) where.push(`${span.name} / ${e.name} ${k}`);
    }
    expect(where).toEqual(['attention permission / attention.answered aep.data']);
  });
});
