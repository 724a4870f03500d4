import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../support/processes.js';
import type { WsConsumer } from '../../support/aep-stream-client.js';
import { acksOf, commandOf, events, health, HOLD, hook, operator, postHook, startRig, type Rig } from '../../support/control-rig.js';
import { aepValidator } from '../../support/aep-validator.js';
import { DEFAULT_DENY_MESSAGE } from '../../../src/control/control-target.js';

const GATE = { AEP_HERMES_CONTROL: '1' };
let rig: Rig | undefined;
const ops: WsConsumer[] = [];
afterEach(async () => {
  for (const c of ops.splice(0)) c.close();
  await rig?.close();
  rig = undefined;
});
const open = async (r: Rig) => {
  const c = await operator(r);
  ops.push(c);
  return c;
};
let n = 0;
const newSession = () => `20261201_100000_ctl${++n}`;

/** a session with an open turn, then one held pre_tool_call: its pending reply and its card */
async function heldCall(r: Rig, op: WsConsumer, session: string, call = 'call_1', tool = 'terminal') {
  for (const h of ['on_session_start', 'pre_llm_call']) expect((await postHook(r.env['AEP_SOCKET']!, hook(h, session))).status).toBe(200);
  const reply = postHook(r.env['AEP_SOCKET']!, hook('pre_tool_call', session, { call, tool }), HOLD);
  const card = await waitFor('the gate card', () =>
    events(op).find((e) => e['type'] === 'attention.requested' && e['session'] === session && e['data']?.respond_via?.includes('control')),
  );
  return { reply, card };
}

const send = (op: WsConsumer, cmd: Record<string, unknown>) => op.send(cmd);
const respond = (session: string, cardId: string, answer: Record<string, unknown>, o: { id?: string } = {}) =>
  commandOf('control.attention.respond', session, { answer }, { subject: cardId, ...o });

describe('the operator-deny gate (AEP_HERMES_CONTROL=1), through the embedded endpoint', () => {
  it('holds a gated pre_tool_call as an answerable permission card; allow releases {} (AEP-0004 §7 attention round-trip)', async () => {
    rig = await startRig(GATE);
    const op = await open(rig);
    const s = newSession();
    const { reply, card } = await heldCall(rig, op, s);
    const requested = events(op).find((e) => e['type'] === 'tool.requested' && e['session'] === s)!;
    expect(card['cause']).toBe(requested['id']);
    expect(card['data']).toMatchObject({ kind: 'permission', respond_via: ['control'], options: [{ id: 'allow' }, { id: 'deny' }] });
    const expires = Date.parse(card['data']['expires_at']);
    expect(expires - Date.parse(card['time'])).toBe(55_000);
    expect((await health(rig.env['AEP_SOCKET']!)).control_target.pending_cards).toBe(1);
    // still held: no reply yet
    let settled = false;
    void reply.then(() => (settled = true));
    const cmd = respond(s, card['id'], { option: 'allow' });
    send(op, cmd);
    const r = await reply;
    expect(settled).toBe(true);
    expect(r).toEqual({ status: 200, body: '{}' });
    const hist = rig.history(s);
    const types = hist.map((e) => e['type']);
    const at = types.indexOf('control.attention.respond');
    expect(types.slice(at)).toEqual(['control.attention.respond', 'control.accepted', 'attention.answered', 'attention.resolved']);
    const [stored, ack, answered, resolved] = hist.slice(at);
    expect(stored!['seq']).toBeUndefined();
    expect(stored!['id']).toBe(cmd['id']);
    expect(ack!['cause']).toBe(cmd['id']);
    expect(answered).toMatchObject({ cause: cmd['id'], subject: card['id'], data: { answer: { option: 'allow' }, via: 'control' } });
    expect(resolved).toMatchObject({ subject: card['id'], cause: answered!['id'], data: { resolution: 'answered' } });
    expect(typeof resolved!['data']['latency_ms']).toBe('number');
    expect(answered!['run']).toBe(card['run']);
    // every own event validates against its schema
    const validate = aepValidator();
    for (const e of hist.filter((x) => x['agent'] === 'hermes')) expect(validate(e), String(e['type'])).toEqual([]);
    // the next post_tool_call maps unchanged
    expect((await postHook(rig.env['AEP_SOCKET']!, hook('post_tool_call', s, { call: 'call_1' }))).status).toBe(200);
    expect(rig.history(s).at(-1)!['type']).toBe('tool.completed');
  });

  it('deny with a reason blocks with that message; deny alone with the documented default', async () => {
    rig = await startRig(GATE);
    const op = await open(rig);
    const s1 = newSession();
    const a = await heldCall(rig, op, s1);
    send(op, respond(s1, a.card['id'], { option: 'deny', text: 'not on prod' }));
    expect(JSON.parse((await a.reply).body)).toEqual({ action: 'block', message: 'not on prod' });
    const answered = rig.history(s1).find((e) => e['type'] === 'attention.answered')!;
    // the attention category is captured at `redacted` by default: the reason rides, redacted on the way
    expect(answered['data']).toEqual({ answer: { option: 'deny', text: 'not on prod' }, via: 'control' });
    const s2 = newSession();
    const b = await heldCall(rig, op, s2);
    send(op, respond(s2, b.card['id'], { option: 'deny' }));
    expect(JSON.parse((await b.reply).body)).toEqual({ action: 'block', message: DEFAULT_DENY_MESSAGE });
    // a blocked call's post maps as Hermes reports it: tool.denied by policy
    const post = JSON.parse(hook('post_tool_call', s2, { call: 'call_1' })) as Record<string, any>;
    post['extra'] = {
      ...post['extra'],
      status: 'blocked',
      error_type: 'plugin_block',
      error_message: DEFAULT_DENY_MESSAGE,
      result: JSON.stringify({ error: DEFAULT_DENY_MESSAGE }),
    };
    await postHook(rig.env['AEP_SOCKET']!, JSON.stringify(post));
    expect(rig.history(s2).at(-1)).toMatchObject({ type: 'tool.denied', data: { by: 'policy' } });
  });

  it('AEP-0008 §1: an option word as text IS that option; other text denies with it as the reason; empty, values or a foreign option are invalid and leave the card held', async () => {
    rig = await startRig(GATE);
    const op = await open(rig);
    const s = newSession();
    const { reply, card } = await heldCall(rig, op, s);
    const bad = [
      respond(s, card['id'], { text: '   ' }),
      respond(s, card['id'], { values: { a: 'b' } }),
      respond(s, card['id'], { option: 'once' }),
      respond(s, card['id'], {}),
    ];
    for (const c of bad) send(op, c);
    for (const c of bad) {
      const [ack] = await waitFor('the nack', () => (acksOf(op, c['id'] as string).length ? acksOf(op, c['id'] as string) : undefined));
      expect(JSON.parse(ack!)).toMatchObject({ type: 'control.rejected', data: { reason: 'invalid' } });
    }
    // a foreign option's value is never quoted back
    expect(acksOf(op, bad[2]!['id'] as string)[0]).not.toContain('once');
    const word = respond(s, card['id'], { text: '  ALLOW ' });
    send(op, word);
    expect((await reply).body).toBe('{}');
    expect(rig.history(s).find((e) => e['type'] === 'attention.answered')!['data']).toEqual({ answer: { option: 'allow' }, via: 'control' });

    const s2 = newSession();
    const b = await heldCall(rig, op, s2);
    send(op, respond(s2, b.card['id'], { text: 'looks risky, do not' }));
    expect(JSON.parse((await b.reply).body)).toEqual({ action: 'block', message: 'looks risky, do not' });
    expect(rig.history(s2).find((e) => e['type'] === 'attention.answered')!['data']).toEqual({
      answer: { option: 'deny', text: 'looks risky, do not' },
      via: 'control',
    });
  });

  it('expiry: attention.timeout and {} after the window; a late answer is refused', async () => {
    rig = await startRig({ ...GATE, AEP_ATTENTION_TIMEOUT_MS: '1000' });
    const op = await open(rig);
    const s = newSession();
    const t0 = Date.now();
    const { reply, card } = await heldCall(rig, op, s);
    expect((await reply).body).toBe('{}');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    const timeout = rig.history(s).find((e) => e['type'] === 'attention.timeout')!;
    expect(timeout).toMatchObject({ subject: card['id'], cause: card['id'] });
    expect(timeout['data']['after_ms']).toBeGreaterThanOrEqual(1000);
    const late = respond(s, card['id'], { option: 'deny' });
    send(op, late);
    const [ack] = await waitFor('the nack', () => (acksOf(op, late['id'] as string).length ? acksOf(op, late['id'] as string) : undefined));
    expect(JSON.parse(ack!)).toMatchObject({ type: 'control.rejected', data: { reason: 'refused' } });
  });

  it('the hold never outlasts the transport: a shorter declared wait shortens it', async () => {
    rig = await startRig(GATE);
    const op = await open(rig);
    const s = newSession();
    for (const h of ['on_session_start', 'pre_llm_call']) await postHook(rig.env['AEP_SOCKET']!, hook(h, s));
    const r = await postHook(rig.env['AEP_SOCKET']!, hook('pre_tool_call', s, { call: 'c', tool: 'terminal' }), { 'x-hermes-aep-hold-ms': '3200' });
    expect(r.body).toBe('{}');
    const card = rig.history(s).find((e) => e['type'] === 'attention.requested')!;
    expect(Date.parse(card['data']['expires_at']) - Date.parse(card['time'])).toBe(1200);
    expect(events(op).some((e) => e['type'] === 'attention.timeout' && e['subject'] === card['id'])).toBe(true);
  });

  it('the hook connection gone before release: attention.resolved dismissed; a later answer is refused', async () => {
    rig = await startRig(GATE);
    const op = await open(rig);
    const s = newSession();
    for (const h of ['on_session_start', 'pre_llm_call']) await postHook(rig.env['AEP_SOCKET']!, hook(h, s));
    const abort = new AbortController();
    const reply = postHook(rig.env['AEP_SOCKET']!, hook('pre_tool_call', s, { call: 'c1', tool: 'terminal' }), HOLD, abort.signal).catch((e: unknown) => e);
    const card = await waitFor('the card', () => events(op).find((e) => e['type'] === 'attention.requested' && e['session'] === s));
    abort.abort();
    expect(await reply).toBeInstanceOf(Error);
    const dismissed = await waitFor('dismissed', () => rig!.history(s).find((e) => e['type'] === 'attention.resolved' && e['subject'] === card['id']));
    // the wait rides as for an answer: how long the call was held before its hook went away
    expect(dismissed['data']).toEqual({ resolution: 'dismissed', latency_ms: expect.any(Number) });
    const late = respond(s, card['id'], { option: 'allow' });
    send(op, late);
    const [ack] = await waitFor('the nack', () => (acksOf(op, late['id'] as string).length ? acksOf(op, late['id'] as string) : undefined));
    expect(JSON.parse(ack!)).toMatchObject({ data: { reason: 'refused' } });
  });

  it('tools outside AEP_HERMES_GATE_TOOLS, and transports that did not declare a wait, are never held', async () => {
    rig = await startRig({ ...GATE, AEP_HERMES_GATE_TOOLS: 'terminal|write_file' });
    const s = newSession();
    for (const h of ['on_session_start', 'pre_llm_call']) await postHook(rig.env['AEP_SOCKET']!, hook(h, s));
    expect((await postHook(rig.env['AEP_SOCKET']!, hook('pre_tool_call', s, { call: 'a', tool: 'read_file' }), HOLD)).body).toBe('{}');
    // a prefix is not a match (a whole-name match, like Hermes's matcher)
    expect((await postHook(rig.env['AEP_SOCKET']!, hook('pre_tool_call', s, { call: 'b', tool: 'terminal2' }), HOLD)).body).toBe('{}');
    expect((await postHook(rig.env['AEP_SOCKET']!, hook('pre_tool_call', s, { call: 'c', tool: 'terminal' }))).body).toBe('{}');
    expect(rig.history(s).some((e) => e['type'] === 'attention.requested')).toBe(false);
  });

  it('gate off: observe-only; hello declares accepts [], and a respond is nacked unsupported in the session history', async () => {
    rig = await startRig({});
    const op = await open(rig);
    const hello = op.parsed().find((f) => f['type'] === 'hello')!;
    expect(hello['capabilities']).toMatchObject({ control: { accepts: [], ack_window_ms: 10_000 } });
    const s = newSession();
    for (const h of ['on_session_start', 'pre_llm_call']) await postHook(rig.env['AEP_SOCKET']!, hook(h, s));
    expect((await postHook(rig.env['AEP_SOCKET']!, hook('pre_tool_call', s, { call: 'a', tool: 'terminal' }), HOLD)).body).toBe('{}');
    const cmd = respond(s, 'nothing', { option: 'allow' });
    send(op, cmd);
    const [ack] = await waitFor('the nack', () => (acksOf(op, cmd['id'] as string).length ? acksOf(op, cmd['id'] as string) : undefined));
    expect(JSON.parse(ack!)).toMatchObject({ type: 'control.rejected', session: s, data: { reason: 'unsupported' } });
    expect((await health(rig.env['AEP_SOCKET']!)).control).toBe(false);
  });
});

describe('ack discipline (AEP-0004 §3, §7)', () => {
  it('declares control.attention.respond at hello (gated on), and nacks undeclared types and cancel/pause/resume as not adopted', async () => {
    rig = await startRig(GATE);
    const op = await open(rig);
    expect(op.parsed().find((f) => f['type'] === 'hello')!['capabilities']).toMatchObject({ control: { accepts: ['control.attention.respond'] } });
    const s = newSession();
    for (const h of ['on_session_start', 'pre_llm_call']) await postHook(rig.env['AEP_SOCKET']!, hook(h, s));
    const cancel = commandOf('control.cancel', s, { scope: 'run' });
    const instruct = commandOf('x.hermes.control.instruct', s, { text: 'hello' });
    send(op, cancel);
    send(op, instruct);
    for (const c of [cancel, instruct]) {
      const [ack] = await waitFor('the nack', () => (acksOf(op, c['id'] as string).length ? acksOf(op, c['id'] as string) : undefined));
      expect(JSON.parse(ack!)).toMatchObject({ type: 'control.rejected', data: { reason: 'unsupported' } });
    }
    // the detail is redacted-class: at the default metadata ceiling only the reason rides
    expect(JSON.parse(acksOf(op, cancel['id'] as string)[0]!)['data']).toEqual({ reason: 'unsupported' });
  });

  it('AEP-0004 §7, §4 item 1: control needs an authenticated connection: refused at the upgrade with a token set, in-band (unauthorized) on a watch-only one; never in the session', async () => {
    const { WsConsumer } = await import('../../support/aep-stream-client.js');
    rig = await startRig(GATE);
    await expect(WsConsumer.open(rig.wsUrl, undefined, 'consumer', 'anonymous')).rejects.toThrow(/401/);
    await rig.close();
    rig = await startRig({ ...GATE, AEP_TOKEN: '', AEP_STREAM_READ: 'open' });
    const s = newSession();
    for (const h of ['on_session_start', 'pre_llm_call']) await postHook(rig.env['AEP_SOCKET']!, hook(h, s));
    const reply = postHook(rig.env['AEP_SOCKET']!, hook('pre_tool_call', s, { call: 'c', tool: 'terminal' }), HOLD);
    const card = await waitFor('the card', () => rig!.history(s).find((e) => e['type'] === 'attention.requested'));
    const anon = await WsConsumer.open(rig.wsUrl, undefined, 'consumer', 'anonymous');
    ops.push(anon);
    const cmd = respond(s, card['id'], { option: 'allow' });
    anon.send(cmd);
    await waitFor('the refusal', () => anon.parsed().find((f) => f['type'] === 'error' && f['cause'] === cmd['id'] && f['code'] === 'unauthorized'));
    expect(rig.history(s).some((e) => e['id'] === cmd['id'] || e['cause'] === cmd['id'])).toBe(false);
    // still held: a graceful stop answers it {}
    expect((await health(rig.env['AEP_SOCKET']!)).control_target.pending_cards).toBe(1);
    await rig.close();
    rig = undefined;
    expect((await reply).body).toBe('{}');
  });

  it('a duplicate command gets one decision; its redelivery re-emits the recorded ack byte for byte', async () => {
    rig = await startRig(GATE);
    const op = await open(rig);
    const s = newSession();
    const { reply, card } = await heldCall(rig, op, s);
    const cmd = respond(s, card['id'], { option: 'deny', text: 'once only' });
    send(op, cmd);
    send(op, cmd);
    await reply;
    const first = await waitFor('the ack', () => acksOf(op, cmd['id'] as string)[0]);
    send(op, cmd);
    const again = await waitFor('the re-ack', () => (acksOf(op, cmd['id'] as string).length >= 2 ? acksOf(op, cmd['id'] as string) : undefined));
    expect(again.every((l) => l === first)).toBe(true);
    const hist = rig.history(s);
    expect(hist.filter((e) => e['type'] === 'control.accepted')).toHaveLength(1);
    expect(hist.filter((e) => e['type'] === 'attention.answered')).toHaveLength(1);
    expect(hist.filter((e) => e['id'] === cmd['id'])).toHaveLength(1);
    expect(rig.historyLines(s).filter((l) => l === first)).toHaveLength(1);
  });

  it('a command for another session’s card is invalid, and the card stays held', async () => {
    rig = await startRig(GATE);
    const op = await open(rig);
    const a = newSession();
    const b = newSession();
    for (const h of ['on_session_start', 'pre_llm_call']) await postHook(rig.env['AEP_SOCKET']!, hook(h, b));
    const held = await heldCall(rig, op, a);
    const wrong = respond(b, held.card['id'], { option: 'allow' });
    send(op, wrong);
    const [ack] = await waitFor('the nack', () => (acksOf(op, wrong['id'] as string).length ? acksOf(op, wrong['id'] as string) : undefined));
    expect(JSON.parse(ack!)).toMatchObject({ session: b, data: { reason: 'invalid' } });
    send(op, respond(a, held.card['id'], { option: 'allow' }));
    expect((await held.reply).body).toBe('{}');
  });

  it('a restart between the command and its redelivery: the ack, rebuilt from the history, is re-emitted byte for byte, never decided again', async () => {
    rig = await startRig(GATE);
    let op = await open(rig);
    const s = newSession();
    const { reply, card } = await heldCall(rig, op, s);
    const cmd = respond(s, card['id'], { option: 'allow' });
    send(op, cmd);
    await reply;
    const first = await waitFor('the ack', () => acksOf(op, cmd['id'] as string)[0]);
    op.close();
    ops.length = 0;
    const dirs = { AEP_STATE_DIR: rig.env['AEP_STATE_DIR']!, AEP_LOG_DIR: rig.env['AEP_LOG_DIR']!, AEP_SOCKET: rig.env['AEP_SOCKET']! };
    await rig.close();
    rig = await startRig(GATE, dirs);
    op = await open(rig);
    send(op, cmd);
    expect(await waitFor('the re-ack', () => acksOf(op, cmd['id'] as string)[0])).toBe(first);
    expect(rig.history(s).filter((e) => e['type'] === 'control.accepted')).toHaveLength(1);
  });

  it('a graceful stop answers every held hook {} and dismisses its card; after the restart an answer to it is refused', async () => {
    rig = await startRig(GATE);
    const op = await open(rig);
    const s = newSession();
    const { card, reply } = await heldCall(rig, op, s);
    op.close();
    ops.length = 0;
    const dirs = { AEP_STATE_DIR: rig.env['AEP_STATE_DIR']!, AEP_LOG_DIR: rig.env['AEP_LOG_DIR']!, AEP_SOCKET: rig.env['AEP_SOCKET']! };
    await rig.close();
    expect((await reply).body).toBe('{}');
    expect(rig.history(s).filter((e) => e['subject'] === card['id'] && e['type'] === 'attention.resolved')).toHaveLength(1);
    rig = await startRig(GATE, dirs);
    const op2 = await open(rig);
    const late = respond(s, card['id'], { option: 'allow' });
    send(op2, late);
    const [ack] = await waitFor('the nack', () => (acksOf(op2, late['id'] as string).length ? acksOf(op2, late['id'] as string) : undefined));
    expect(JSON.parse(ack!)).toMatchObject({ data: { reason: 'refused' } });
  });
});
