import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../support/processes.js';
import type { WsConsumer } from '../../support/aep-stream-client.js';
import { acksOf, commandOf, events, HOLD, hook, operator, postHook, STEER, startRig, type Rig } from '../../support/control-rig.js';
import { MAX_INSTRUCTION_CHARS, MAX_QUEUED } from '../../../src/control/instruction-queue.js';

const INSTRUCT = { AEP_INSTRUCT: '1' };
let rig: Rig | undefined;
const ops: WsConsumer[] = [];
afterEach(async () => {
  for (const c of ops.splice(0)) c.close();
  await rig?.close();
  rig = undefined;
});
let n = 0;
const newSession = () => `20261201_110000_steer${++n}`;
const instruct = (session: string, text: string) => commandOf('x.hermes.control.instruct', session, { text });

async function ackOf(op: WsConsumer, cmd: Record<string, unknown>): Promise<Record<string, any>> {
  const id = cmd['id'] as string;
  const [line] = await waitFor('the ack', () => (acksOf(op, id).length ? acksOf(op, id) : undefined));
  return JSON.parse(line!) as Record<string, any>;
}

async function started(r: Rig, session: string) {
  expect((await postHook(r.env['AEP_SOCKET']!, hook('on_session_start', session))).status).toBe(200);
  expect((await postHook(r.env['AEP_SOCKET']!, hook('pre_llm_call', session, { turn: `${session}:t:1` }))).body).toBe('{}');
}

describe('steering (AEP_INSTRUCT=1): x.hermes.control.instruct', () => {
  it('queues per session and delivers at the next turn start, joined in arrival order, exactly once, each audited with its cause', async () => {
    rig = await startRig(INSTRUCT);
    const op = await operator(rig);
    ops.push(op);
    expect(op.parsed().find((f) => f['type'] === 'hello')!['capabilities']).toMatchObject({ control: { accepts: ['x.hermes.control.instruct'] } });
    const s = newSession();
    await started(rig, s);
    const a = instruct(s, 'first: keep the diff small');
    const b = instruct(s, 'second: run the tests');
    op.send(a);
    expect(await ackOf(op, a)).toMatchObject({ type: 'control.accepted', cause: a['id'] });
    op.send(b);
    expect(await ackOf(op, b)).toMatchObject({ type: 'control.accepted' });
    // a turn end is no delivery moment: the queue survives it
    expect((await postHook(rig.env['AEP_SOCKET']!, hook('on_session_end', s, { turn: `${s}:t:1` }))).body).toBe('{}');
    const r = await postHook(rig.env['AEP_SOCKET']!, hook('pre_llm_call', s, { turn: `${s}:t:2` }), STEER);
    expect(JSON.parse(r.body)).toEqual({ context: 'first: keep the diff small\n\nsecond: run the tests' });
    const hist = rig.history(s);
    const delivered = hist.filter((e) => e['type'] === 'x.hermes.instruction.delivered');
    expect(delivered.map((e) => e['cause'])).toEqual([a['id'], b['id']]);
    const run = hist.filter((e) => e['type'] === 'run.started').at(-1)!;
    expect(delivered.every((e) => e['run'] === run['run'] && (e['seq'] as number) > (run['seq'] as number))).toBe(true);
    expect(delivered.every((e) => typeof e['data']['queued_ms'] === 'number')).toBe(true);
    // delivered once: the next turn start gets nothing
    expect((await postHook(rig.env['AEP_SOCKET']!, hook('pre_llm_call', s, { turn: `${s}:t:3` }), STEER)).body).toBe('{}');
    // the instruction text is redacted-class: at the default metadata ceiling the stored command keeps no text
    const stored = hist.find((e) => e['id'] === a['id'])!;
    expect(JSON.stringify(stored)).not.toContain('keep the diff small');
    expect(stored['capture']).toBe('metadata');
  });

  it('a transport that does not pass the reply (no steer declaration) takes nothing from the queue', async () => {
    rig = await startRig(INSTRUCT);
    const op = await operator(rig);
    ops.push(op);
    const s = newSession();
    await started(rig, s);
    const a = instruct(s, 'later');
    op.send(a);
    await ackOf(op, a);
    expect((await postHook(rig.env['AEP_SOCKET']!, hook('pre_llm_call', s, { turn: `${s}:t:2` }))).body).toBe('{}');
    expect(rig.history(s).some((e) => e['type'] === 'x.hermes.instruction.delivered')).toBe(false);
    expect(JSON.parse((await postHook(rig.env['AEP_SOCKET']!, hook('pre_llm_call', s, { turn: `${s}:t:3` }), STEER)).body)).toEqual({ context: 'later' });
  });

  it('caps: 20 instructions a session (the 21st is invalid), 4000 characters each, text required', async () => {
    rig = await startRig(INSTRUCT);
    const op = await operator(rig);
    ops.push(op);
    const s = newSession();
    await started(rig, s);
    const many = Array.from({ length: MAX_QUEUED }, (_, i) => instruct(s, `n${i}`));
    for (const c of many) op.send(c);
    for (const c of many) expect((await ackOf(op, c))['type']).toBe('control.accepted');
    const over = instruct(s, 'one too many');
    const long = instruct(s, 'x'.repeat(MAX_INSTRUCTION_CHARS + 1));
    const elsewhere = instruct(newSession(), 'no such session');
    const empty = commandOf('x.hermes.control.instruct', s, { text: '' });
    const none = commandOf('x.hermes.control.instruct', s, {});
    for (const c of [over, long, empty, none, elsewhere]) op.send(c);
    for (const c of [over, long, empty]) expect(await ackOf(op, c)).toMatchObject({ type: 'control.rejected', data: { reason: 'invalid' } });
    const refusal = (c: Record<string, unknown>, code: string) =>
      waitFor(`the ${code} refusal`, () => op.parsed().find((f) => f['type'] === 'error' && f['cause'] === c['id'] && f['code'] === code));
    // a payload its schema refuses never reaches the target: the endpoint answers it in-band (AEP-0003 §3.5)
    await refusal(none, 'invalid-event');
    // a session this daemon does not hold is no own session: nobody claims it (AEP-0004 §4 item 2)
    await refusal(elsewhere, 'no-route');
    const r = JSON.parse((await postHook(rig.env['AEP_SOCKET']!, hook('pre_llm_call', s, { turn: `${s}:t:2` }), STEER)).body) as { context: string };
    expect(r.context.split('\n\n')).toEqual(many.map((_, i) => `n${i}`));
  });

  it('an instruction still queued when the session really ends is dropped, audited before session.ended', async () => {
    rig = await startRig(INSTRUCT);
    const op = await operator(rig);
    ops.push(op);
    const s = newSession();
    await started(rig, s);
    const a = instruct(s, 'never read');
    op.send(a);
    await ackOf(op, a);
    await postHook(rig.env['AEP_SOCKET']!, hook('on_session_end', s, { turn: `${s}:t:1` }));
    await postHook(rig.env['AEP_SOCKET']!, hook('on_session_finalize', s));
    const types = rig.history(s).map((e) => e['type']);
    expect(types.slice(-2)).toEqual(['x.hermes.instruction.dropped', 'session.ended']);
    const dropped = rig.history(s).find((e) => e['type'] === 'x.hermes.instruction.dropped')!;
    expect(dropped).toMatchObject({ cause: a['id'], data: { reason: 'session-ended' }, severity: 'notice' });
  });

  it('the two gates never mix: a held pre_tool_call reply carries the decision only, the queue waits for the turn start', async () => {
    rig = await startRig({ ...INSTRUCT, AEP_HERMES_CONTROL: '1' });
    const op = await operator(rig);
    ops.push(op);
    expect(op.parsed().find((f) => f['type'] === 'hello')!['capabilities']).toMatchObject({
      control: { accepts: ['control.attention.respond', 'x.hermes.control.instruct'] },
    });
    const s = newSession();
    await started(rig, s);
    const a = instruct(s, 'be careful');
    op.send(a);
    await ackOf(op, a);
    const reply = postHook(rig.env['AEP_SOCKET']!, hook('pre_tool_call', s, { call: 'c1', tool: 'terminal' }), { ...HOLD, ...STEER });
    const card = await waitFor('the card', () => events(op).find((e) => e['type'] === 'attention.requested' && e['session'] === s));
    op.send(commandOf('control.attention.respond', s, { answer: { option: 'deny', text: 'no' } }, { subject: card['id'] as string }));
    expect(JSON.parse((await reply).body)).toEqual({ action: 'block', message: 'no' });
    expect(rig.history(s).some((e) => e['type'] === 'x.hermes.instruction.delivered')).toBe(false);
    expect(JSON.parse((await postHook(rig.env['AEP_SOCKET']!, hook('pre_llm_call', s, { turn: `${s}:t:2` }), STEER)).body)).toEqual({ context: 'be careful' });
  });
});
