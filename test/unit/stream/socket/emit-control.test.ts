import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../support/processes.js';
import { command, event, wire } from './fakes.js';
import { Client, hello, startRig, type Rig } from './harness.js';

const TOKEN = 'tok-ctl';
let rig: Rig | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await rig?.close();
  rig = undefined;
});
const open = async (url: string, h?: Record<string, unknown>) => {
  const c = await Client.open(url, h);
  clients.push(c);
  return c;
};
const authed = () => `${rig!.url}?access_token=${TOKEN}`;
const CONTROL = { accepts: ['control.attention.respond', 'control.pause'], ack_window_ms: 10000, x_note: 'kept' };

/** an emitter that claims `session` by sending its first event */
async function claimant(session: string, caps: Record<string, unknown> = { control: CONTROL, emits: ['session'] }, agent = 'peer-agent'): Promise<Client> {
  const e = await open(authed(), hello('emitter', { identity: { agent, instance: `${agent}-i` }, capabilities: caps }));
  e.send(event(session, 0));
  await waitFor('the claim', () => rig!.ingress.taken.some((w) => w.session === session && w.agent === 'peer-agent') || undefined);
  return e;
}

describe('socket endpoint: emitters', () => {
  it('AEP-0003 §3.5.3: an emitter’s events are checked and ingested in order, as received; an invalid one is refused in-band', async () => {
    rig = await startRig({ token: TOKEN, ownSourcePrefix: 'aep://me/agent/hermes/' });
    const e = await open(authed(), hello('emitter'));
    const first = JSON.stringify(event('s1', 0)).replace(',', ' , ');
    e.send(first);
    e.send({ ...event('s1', 1, 'progress.status'), seq: -1 });
    e.send(event('s1', 2, 'progress.status', { source: 'aep://me/agent/hermes/session/s1' }));
    e.send(event('s1', 3, 'progress.status'));
    await waitFor('two ingested', () => rig!.ingress.taken.length === 2 || undefined);
    await e.sync();
    const errors = e.got.filter((f) => f.type === 'error');
    expect(errors.map((f) => f['code'])).toEqual(['invalid-event', 'invalid-event']);
    expect(errors[0]!['cause']).toMatch(/TEST$/);
    expect(rig.ingress.taken.map((w) => w.seq)).toEqual([0, 3]);
    expect(rig.ingress.taken[0]!.line).toBe(first);
    expect(e.closed).toBeUndefined();
  });

  it('variants of the own source (case, port, user info, encoded segments) are refused in-band like the exact one', async () => {
    rig = await startRig({ token: TOKEN, ownSourcePrefix: 'aep://me/agent/hermes/' });
    const e = await open(authed(), hello('emitter'));
    const variants = ['aep://ME/agent/hermes/session/s1', 'aep://me:1/agent/hermes/session/s1', 'aep://u@me./Agent/%68ermes/session/s1'];
    variants.forEach((source, i) => e.send(event('s1', i, 'progress.status', { source })));
    e.send(event('s1', 7, 'progress.status'));
    await waitFor('one ingested', () => rig!.ingress.taken.length === 1 || undefined);
    await e.sync();
    expect(e.got.filter((f) => f.type === 'error').map((f) => f['code'])).toEqual(['invalid-event', 'invalid-event', 'invalid-event']);
    expect(rig.ingress.taken.map((w) => w.seq)).toEqual([7]);
  });

  it('AEP-0003 §4 rule 3, §8.1: an emitting hello needs an authenticated connection and identity.agent', async () => {
    rig = await startRig();
    const w = await open(rig.url, hello('both'));
    expect(w.got[0]).toMatchObject({ type: 'error', code: 'unauthorized' });
    await w.whenClosed();
    await rig.close();
    rig = await startRig({ token: TOKEN });
    const anon = await open(authed(), { type: 'hello', versions: ['0.1'], role: 'emitter' });
    expect(anon.got[0]).toMatchObject({ type: 'error', code: 'invalid-hello' });
    await anon.whenClosed();
  });

  it('a consumer-only connection does not emit: its events are refused, correlated, and never ingested', async () => {
    rig = await startRig({ token: TOKEN });
    const c = await open(authed(), hello('consumer'));
    const ev = event('s1', 0);
    c.send(ev);
    expect(await c.next((f) => f.type === 'error')).toMatchObject({ code: 'unauthorized', cause: ev['id'] });
    expect(rig.ingress.taken).toHaveLength(0);
  });
});

describe('socket endpoint: roster (AEP-0003 §4.1)', () => {
  it('AEP-0003 §4.1 rules 2-5: the id is echoed, one entry per live claim with declarations verbatim, own sessions included', async () => {
    rig = await startRig({ token: TOKEN });
    rig.hub.own = ['h_own'];
    await claimant('s_a');
    await claimant('s_a', {}, 'other-agent');
    const c = await open(authed(), hello('consumer'));
    c.send({ type: 'roster', id: 'r-1' });
    const r = await c.next((f) => f.type === 'roster');
    expect(r['id']).toBe('r-1');
    expect(r['entries']).toEqual([
      { session: 'h_own', agent: 'hermes', instance: 'test-host/1', control: { accepts: [], ack_window_ms: 10000 } },
      { session: 's_a', agent: 'peer-agent', instance: 'peer-agent-i', control: CONTROL, emits: ['session'] },
      { session: 's_a', agent: 'other-agent', instance: 'other-agent-i' },
    ]);
  });

  it('AEP-0003 §4.1 rule 2: an emitter-role roster request is refused in-band (unauthorized, same id) and the connection survives', async () => {
    rig = await startRig({ token: TOKEN });
    const e = await open(authed(), hello('emitter'));
    e.send({ type: 'roster', id: 'deny-1' });
    expect(await e.next((f) => f.type === 'error')).toMatchObject({ id: 'deny-1', code: 'unauthorized' });
    await e.sync();
    expect(e.closed).toBeUndefined();
  });

  it('AEP-0003 §4.1 rule 3: a claim ends with its connection and with session.ended', async () => {
    rig = await startRig({ token: TOKEN });
    const a = await claimant('s_gone');
    const b = await claimant('s_ends');
    b.send(event('s_ends', 1, 'session.ended'));
    await waitFor('session.ended ingested', () => rig!.ingress.taken.some((w) => w.type === 'session.ended') || undefined);
    a.close();
    await a.whenClosed();
    const c = await open(authed(), hello('consumer'));
    await waitFor('no claims', () => rig!.endpoint.stats()['claims'] === 0 || undefined);
    c.send({ type: 'roster', id: 'r-2' });
    expect((await c.next((f) => f.type === 'roster'))['entries']).toEqual([]);
  });
});

describe('socket endpoint: commands (AEP-0004 §4)', () => {
  it('AEP-0004 §4.1: no command reaches a target from an unauthenticated connection', async () => {
    rig = await startRig();
    const sender = await open(rig.url, hello('consumer'));
    const cmd = command('s_t', 'control.attention.respond');
    const malformed: Record<string, unknown> = { ...command('s_t'), data: 'not an object' };
    sender.send(cmd);
    sender.send(malformed);
    await waitFor('two refusals', () => sender.got.filter((f) => f.type === 'error').length === 2 || undefined);
    expect(sender.got.filter((f) => f.type === 'error').map((f) => [f['cause'], f['code']])).toEqual([
      [cmd['id'], 'unauthorized'],
      [malformed['id'], 'unauthorized'],
    ]);
    expect(rig.ingress.taken).toHaveLength(0);
    expect(rig.endpoint.stats()['commands_forwarded']).toBe(0);
  });

  it('AEP-0004 §4.2, §4.5: a session with history but no live claimant draws a cause-correlated no-route frame; its replay is untouched', async () => {
    rig = await startRig({ token: TOKEN });
    rig.hub.publish([wire(event('s_hist', 0)), wire(event('s_hist', 1, 'progress.status'))]);
    const sender = await open(authed(), hello('consumer'));
    const cmd = command('s_hist');
    sender.send(cmd);
    expect(await sender.next((f) => f.type === 'error')).toMatchObject({ type: 'error', cause: cmd['id'], code: 'no-route' });
    expect(rig.hub.held.filter((w) => w.session === 's_hist').map((w) => w.type)).toEqual(['session.started', 'progress.status']);
    expect(rig.ingress.taken).toHaveLength(0);
  });

  it('AEP-0004 §4.4: one claimant gets the command byte-identically, and it is persisted; the sender gets no error', async () => {
    rig = await startRig({ token: TOKEN });
    const target = await claimant('s_t');
    const sender = await open(authed(), hello('both', { identity: { agent: 'sender', instance: 'x' } }));
    const text = JSON.stringify(command('s_t')).replace('{', '{ ');
    sender.send(text);
    await target.next((f) => f.type === 'control.pause');
    expect(target.raw.at(-1)).toBe(text);
    await waitFor('the command persisted', () => rig!.ingress.taken.find((w) => w.type === 'control.pause'));
    expect(rig.ingress.taken.find((w) => w.type === 'control.pause')!.line).toBe(text.trim());
    await sender.sync();
    expect(sender.got.some((f) => f.type === 'error')).toBe(false);
  });

  it('AEP-0004 §4.5, §4.2: two claimants → ambiguous; own session and an undeclared type → unsupported; nothing is forwarded', async () => {
    rig = await startRig({ token: TOKEN });
    rig.hub.own = ['h_own'];
    const t1 = await claimant('s_two');
    const t2 = await claimant('s_two');
    const t3 = await claimant('s_one');
    const sender = await open(authed(), hello('consumer'));
    const cmds = [command('s_two'), command('h_own'), command('s_one', 'control.cancel')];
    for (const c of cmds) sender.send(c);
    await waitFor('three refusals', () => sender.got.filter((f) => f.type === 'error').length === 3 || undefined);
    expect(sender.got.filter((f) => f.type === 'error').map((f) => [f['cause'], f['code']])).toEqual([
      [cmds[0]!['id'], 'ambiguous'],
      [cmds[1]!['id'], 'unsupported'],
      [cmds[2]!['id'], 'unsupported'],
    ]);
    for (const t of [t1, t2, t3]) {
      await t.sync();
      expect(t.got.some((f) => String(f.type).startsWith('control.'))).toBe(false);
    }
    expect(rig.ingress.taken.some((w) => w.type.startsWith('control.'))).toBe(false);
  });
});

describe('socket endpoint: emitter backpressure', () => {
  it('an emitter outpacing the history stops being read, then resumes with every event taken in order', async () => {
    rig = await startRig({ token: TOKEN });
    let open_: () => void = () => undefined;
    rig.ingress.gate = new Promise((r) => (open_ = r));
    const e = await open(authed(), hello('emitter'));
    for (let i = 0; i < 600; i++) e.send(event('s_fast', i, i === 0 ? 'session.started' : 'progress.status'));
    await waitFor('the read pause', () => rig!.endpoint.stats()['read_pauses']! >= 1 || undefined);
    expect(rig.ingress.taken).toHaveLength(0);
    open_();
    await waitFor('600 ingested', () => rig!.ingress.taken.length === 600 || undefined);
    expect(rig.ingress.taken.map((w) => w.seq)).toEqual(Array.from({ length: 600 }, (_, i) => i));
    await e.sync();
    expect(e.closed).toBeUndefined();
  });
});
