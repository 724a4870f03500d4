import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../support/processes.js';
import type { WsConsumer } from '../../support/aep-stream-client.js';
import { acksOf, commandOf, events, health, HOLD, hook, operator, postHook, startRig, type Rig } from '../../support/control-rig.js';

// The same release paths as gate.test.ts, with the operator attached to a SECOND daemon used as the relay
// (AEP-0003 §3.5): the Hermes daemon connects out to it as an emitter (AEP_RELAY_URL), claims its sessions
// there, and receives the commands that relay routes to it (AEP-0004 §4 item 5: one target).
const rigs: Rig[] = [];
const ops: WsConsumer[] = [];
afterEach(async () => {
  for (const c of ops.splice(0)) c.close();
  for (const r of rigs.splice(0).reverse()) await r.close();
});
let n = 0;
const newSession = () => `20261201_120000_relay${++n}`;

/** the relay (a plain daemon), the Hermes daemon linked to it with `env`, and an operator on the relay */
async function topology(env: Record<string, string>) {
  const relay = await startRig({ AEP_SOURCE_HOST: 'relay-host' });
  rigs.push(relay);
  const hermes = await startRig({ ...env, AEP_RELAY_URL: relay.wsUrl, AEP_SOURCE_HOST: 'hermes-host' });
  rigs.push(hermes);
  await waitFor('the relay link', async () => (await health(hermes.env['AEP_SOCKET']!)).relay?.connected === true || undefined);
  const op = await operator(relay);
  ops.push(op);
  return { relay, hermes, op };
}

async function heldCall(hermes: Rig, op: WsConsumer, session: string) {
  for (const h of ['on_session_start', 'pre_llm_call']) expect((await postHook(hermes.env['AEP_SOCKET']!, hook(h, session))).status).toBe(200);
  const reply = postHook(hermes.env['AEP_SOCKET']!, hook('pre_tool_call', session, { call: 'call_r', tool: 'terminal' }), HOLD);
  const card = await waitFor('the gate card on the relay', () =>
    events(op).find((e) => e['type'] === 'attention.requested' && e['session'] === session && e['data']?.respond_via?.includes('control')),
  );
  return { reply, card };
}
const respond = (session: string, card: string, answer: Record<string, unknown>) =>
  commandOf('control.attention.respond', session, { answer }, { subject: card });

describe('the control gate through a relay (a second daemon)', () => {
  it('deny with a reason: the relay routes the command to the one claimant; the block reaches Hermes; acks and outcome come back through the relay', async () => {
    const { hermes, op } = await topology({ AEP_HERMES_CONTROL: '1' });
    const s = newSession();
    const { reply, card } = await heldCall(hermes, op, s);
    const cmd = respond(s, card['id'], { option: 'deny', text: 'not on prod' });
    op.send(cmd);
    expect(JSON.parse((await reply).body)).toEqual({ action: 'block', message: 'not on prod' });
    const [ack] = await waitFor('the ack on the relay', () => (acksOf(op, cmd['id'] as string).length ? acksOf(op, cmd['id'] as string) : undefined));
    expect(JSON.parse(ack!)).toMatchObject({ type: 'control.accepted', source: expect.stringContaining('aep://hermes-host/'), cause: cmd['id'] });
    // byte for byte what the Hermes daemon's history holds
    expect(hermes.historyLines(s)).toContain(ack);
    await waitFor('the outcome on the relay', () => events(op).find((e) => e['type'] === 'attention.resolved' && e['subject'] === card['id']));
    // the relay's redelivery (the operator retries) re-emits the recorded ack, byte for byte; one decision in the history
    op.send(cmd);
    const again = await waitFor('the re-ack', () => (acksOf(op, cmd['id'] as string).length >= 2 ? acksOf(op, cmd['id'] as string) : undefined));
    expect(again.every((l) => l === ack)).toBe(true);
    expect(hermes.history(s).filter((e) => e['type'] === 'control.accepted')).toHaveLength(1);
  });

  it('allow, a wrong session, expiry and a late answer through the relay', async () => {
    const { hermes, op } = await topology({ AEP_HERMES_CONTROL: '1', AEP_ATTENTION_TIMEOUT_MS: '1500' });
    const a = newSession();
    const first = await heldCall(hermes, op, a);
    op.send(respond(a, first.card['id'], { option: 'allow' }));
    expect((await first.reply).body).toBe('{}');
    const b = newSession();
    const second = await heldCall(hermes, op, b);
    const wrong = respond(a, second.card['id'], { option: 'allow' });
    op.send(wrong);
    const [nack] = await waitFor('the nack', () => (acksOf(op, wrong['id'] as string).length ? acksOf(op, wrong['id'] as string) : undefined));
    expect(JSON.parse(nack!)).toMatchObject({ type: 'control.rejected', session: a, data: { reason: 'invalid' } });
    // unanswered: it expires, and the call proceeds
    expect((await second.reply).body).toBe('{}');
    await waitFor('the timeout on the relay', () => events(op).find((e) => e['type'] === 'attention.timeout' && e['subject'] === second.card['id']));
    const late = respond(b, second.card['id'], { option: 'deny' });
    op.send(late);
    const [refused] = await waitFor('the late nack', () => (acksOf(op, late['id'] as string).length ? acksOf(op, late['id'] as string) : undefined));
    expect(JSON.parse(refused!)).toMatchObject({ data: { reason: 'refused' } });
  });

  it('free text denies with it as the reason; the hook gone dismisses; both through the relay', async () => {
    const { hermes, op } = await topology({ AEP_HERMES_CONTROL: '1' });
    const a = newSession();
    const first = await heldCall(hermes, op, a);
    op.send(respond(a, first.card['id'], { text: 'please do not' }));
    expect(JSON.parse((await first.reply).body)).toEqual({ action: 'block', message: 'please do not' });
    const b = newSession();
    for (const h of ['on_session_start', 'pre_llm_call']) await postHook(hermes.env['AEP_SOCKET']!, hook(h, b));
    const abort = new AbortController();
    const gone = postHook(hermes.env['AEP_SOCKET']!, hook('pre_tool_call', b, { call: 'call_g', tool: 'terminal' }), HOLD, abort.signal).catch(
      (e: unknown) => e,
    );
    const card = await waitFor('the card on the relay', () => events(op).find((e) => e['type'] === 'attention.requested' && e['session'] === b));
    abort.abort();
    await gone;
    const dismissed = await waitFor('dismissed on the relay', () => events(op).find((e) => e['type'] === 'attention.resolved' && e['subject'] === card['id']));
    expect(dismissed['data']['resolution']).toBe('dismissed');
  });

  it('a restart of the Hermes daemon between the command and its redelivery through the relay: the recorded ack comes back, byte for byte', async () => {
    const { relay, hermes, op } = await topology({ AEP_HERMES_CONTROL: '1' });
    const s = newSession();
    const { reply, card } = await heldCall(hermes, op, s);
    const cmd = respond(s, card['id'], { option: 'allow' });
    op.send(cmd);
    await reply;
    const ack = await waitFor('the ack', () => acksOf(op, cmd['id'] as string)[0]);
    const dirs = { AEP_STATE_DIR: hermes.env['AEP_STATE_DIR']!, AEP_LOG_DIR: hermes.env['AEP_LOG_DIR']!, AEP_SOCKET: hermes.env['AEP_SOCKET']! };
    await hermes.close();
    rigs.splice(rigs.indexOf(hermes), 1);
    const again = await startRig({ AEP_HERMES_CONTROL: '1', AEP_RELAY_URL: relay.wsUrl, AEP_SOURCE_HOST: 'hermes-host' }, dirs);
    rigs.push(again);
    await waitFor('the relay link', async () => (await health(again.env['AEP_SOCKET']!)).relay?.connected === true || undefined);
    // the session is claimed again on the relay once the restarted daemon emits for it
    await postHook(again.env['AEP_SOCKET']!, hook('pre_llm_call', s, { turn: `${s}:task:turn2` }));
    await waitFor('the new turn on the relay', () =>
      events(op).find((e) => e['type'] === 'run.started' && e['session'] === s && e['run'] === `${s}:task:turn2`),
    );
    op.send(cmd);
    const both = await waitFor('the re-ack', () => (acksOf(op, cmd['id'] as string).length >= 2 ? acksOf(op, cmd['id'] as string) : undefined));
    expect(both.every((l) => l === ack)).toBe(true);
    expect(again.history(s).filter((e) => e['type'] === 'control.accepted')).toHaveLength(1);
  });

  it('a type the Hermes daemon does not declare is refused by the relay on its behalf (a frame, never an Event of the session)', async () => {
    const { hermes, op } = await topology({ AEP_HERMES_CONTROL: '1' });
    const s = newSession();
    for (const h of ['on_session_start', 'pre_llm_call']) await postHook(hermes.env['AEP_SOCKET']!, hook(h, s));
    await waitFor('the session on the relay', () => events(op).find((e) => e['session'] === s && e['type'] === 'run.started'));
    const cmd = commandOf('x.hermes.control.instruct', s, { text: 'steer me' });
    op.send(cmd);
    const frame = await waitFor('the refusal', () => op.parsed().find((f) => f['type'] === 'error' && f['cause'] === cmd['id']));
    expect(frame['code']).toBe('unsupported');
    expect(hermes.history(s).some((e) => e['cause'] === cmd['id'] || e['id'] === cmd['id'])).toBe(false);
  });
});
