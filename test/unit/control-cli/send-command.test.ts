// One command delivered against a small in-test collector (the WebSocket binding as the daemon speaks it):
// subscribe before send, the ack matched by cause, a router's error frame, silence past the ack window, and a
// connection dropped before the ack retried once with the very same bytes (AEP-0004 §2.3).
import { afterEach, describe, expect, it } from 'vitest';
import { instructCommand, respondCommand } from '../../../src/control-cli/command-event.js';
import { sendCommand } from '../../../src/control-cli/send-command.js';
import type { StreamTarget } from '../../../src/tail/sse-client.js';
import { FakeCollector } from '../../support/fake-collector.js';

const CARD = '01JZCARD000000000000000000';
const TOKEN = 'a-token-of-16-chars-or-more';
const link = { agent: 'hermes-aep-cli', instance: 'test-host', stepMs: 5_000 };

let collector: FakeCollector | undefined;
afterEach(async () => {
  await collector?.close();
  collector = undefined;
});

function targetOf(c: FakeCollector, token?: string): StreamTarget {
  return c.where.kind === 'socket'
    ? { kind: 'socket', path: c.where.path }
    : { kind: 'url', url: new URL(`${c.where.url}/stream`), ...(token !== undefined ? { token } : {}) };
}

describe('sending a command', () => {
  it('over TCP with the token: hello as a consumer, the session subscribed before the command, accepted, then the outcome', async () => {
    collector = await FakeCollector.start('tcp');
    collector.token = TOKEN;
    collector.onCommand = (c) => {
      // noise first: another command's ack, another card's outcome, the command echoed back
      c.event('control.accepted', { cause: 'someone-else' });
      c.event('attention.answered', { subject: 'other-card', data: { answer: { option: 'allow' } } });
      c.conn.ws.send(c.text);
      c.event('control.accepted', { cause: c.command.id, data: {} });
      c.event('attention.answered', { subject: CARD, cause: c.command.id, data: { answer: { option: 'deny', text: 'not on prod' }, via: 'control' } });
    };
    const command = respondCommand(CARD, 'sess-1', { option: 'deny', text: 'not on prod' }, { host: 'test-host' });
    const r = await sendCommand({ target: targetOf(collector, TOKEN), command, card: CARD, link });
    expect(r).toMatchObject({ kind: 'ack', ack: { kind: 'accepted' }, outcome: { kind: 'answered', option: 'deny', text: 'not on prod' }, deliveries: 1 });
    const conn = collector.conns[0]!;
    expect(conn.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(conn.frames.map((f) => f.type)).toEqual(['hello', 'subscribe', 'control.attention.respond']);
    expect(conn.frames[0]).toEqual({ type: 'hello', versions: ['0.1'], role: 'consumer', identity: { agent: 'hermes-aep-cli', instance: 'test-host' } });
    expect(conn.frames[1]).toMatchObject({ type: 'subscribe', filter: { session: 'sess-1' } });
    expect(conn.frames[1]!.from).toBeUndefined(); // live only
    expect(conn.raw[2]).toBe(command.line);
    if (r.kind === 'ack') expect(JSON.parse(r.ack.line)).toMatchObject({ type: 'control.accepted', cause: command.id });
  });

  it('over the Unix socket: no token sent, and an outcome that arrives before the ack is kept', async () => {
    collector = await FakeCollector.start('socket');
    collector.onCommand = (c) => {
      c.event('attention.resolved', { subject: CARD, data: { resolution: 'dismissed' } });
      c.event('control.accepted', { cause: c.command.id });
    };
    const command = respondCommand(CARD, 'sess-1', { option: 'allow' }, { host: 'test-host' });
    const r = await sendCommand({ target: targetOf(collector), command, card: CARD, link });
    expect(r).toMatchObject({ kind: 'ack', ack: { kind: 'accepted' }, outcome: { kind: 'resolved', resolution: 'dismissed' } });
    expect(collector.conns[0]!.headers.authorization).toBeUndefined();
  });

  it('control.rejected: the target said no', async () => {
    collector = await FakeCollector.start('socket');
    collector.onCommand = (c) => c.event('control.rejected', { cause: c.command.id, data: { reason: 'unsupported', detail: 'instructions are off' } });
    const r = await sendCommand({ target: targetOf(collector), command: instructCommand('sess-1', 'hi', { host: 'h' }), link });
    expect(r).toMatchObject({ kind: 'ack', ack: { kind: 'rejected', reason: 'unsupported', detail: 'instructions are off' } });
  });

  it("a router's error frame with the command's id as cause is its refusal", async () => {
    collector = await FakeCollector.start('socket');
    collector.onCommand = (c) => {
      c.conn.ws.send(JSON.stringify({ type: 'error', cause: 'not-this-one', code: 'ambiguous' }));
      c.conn.ws.send(JSON.stringify({ type: 'error', cause: c.command.id, code: 'no-route', detail: 'no connected emitter claims this session' }));
    };
    const r = await sendCommand({ target: targetOf(collector), command: instructCommand('sess-1', 'hi', { host: 'h' }), link });
    expect(r).toMatchObject({ kind: 'ack', ack: { kind: 'refused', code: 'no-route', detail: 'no connected emitter claims this session' } });
  });

  it('silence past the declared ack window (+ grace) is no ack', async () => {
    collector = await FakeCollector.start('socket');
    collector.ackWindowMs = 50;
    collector.onCommand = (c) => c.event('control.accepted', { cause: 'someone-else' });
    const t0 = Date.now();
    const r = await sendCommand({ target: targetOf(collector), command: instructCommand('sess-1', 'hi', { host: 'h' }), link, graceMs: 100 });
    expect(r).toEqual({ kind: 'no-ack', waitedMs: 150, deliveries: 1 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it('an accepted answer whose outcome never comes: accepted, no outcome, after one more window', async () => {
    collector = await FakeCollector.start('socket');
    collector.ackWindowMs = 50;
    collector.onCommand = (c) => c.event('control.accepted', { cause: c.command.id });
    const r = await sendCommand({
      target: targetOf(collector),
      command: respondCommand(CARD, 's', { option: 'allow' }, { host: 'h' }),
      card: CARD,
      link,
      graceMs: 0,
    });
    expect(r).toEqual(expect.objectContaining({ kind: 'ack', ack: expect.objectContaining({ kind: 'accepted' }) }));
    expect(r).not.toHaveProperty('outcome');
  });

  it('a connection dropped before the ack: resent once, byte for byte (same id), on a new connection', async () => {
    collector = await FakeCollector.start('socket');
    collector.onCommand = (c) => {
      if (c.n === 1) c.conn.ws.terminate();
      else c.event('control.accepted', { cause: c.command.id });
    };
    const command = instructCommand('sess-1', 'hi', { host: 'h' });
    const r = await sendCommand({ target: targetOf(collector), command, link });
    expect(r).toMatchObject({ kind: 'ack', ack: { kind: 'accepted' }, deliveries: 2 });
    expect(collector.commands).toEqual([command.line, command.line]);
    expect(collector.conns).toHaveLength(2);
    expect(collector.conns[1]!.frames.map((f) => f.type)).toEqual(['hello', 'subscribe', 'x.hermes.control.instruct']);
  });

  it('the daemon restarting under the command: the retry reconnects once it answers again, same bytes', async () => {
    const first = await FakeCollector.start('socket');
    const at = first.where.kind === 'socket' ? first.where.path : '';
    let restarted: Promise<FakeCollector> | undefined;
    first.onCommand = () => {
      // the daemon goes away (socket gone), then comes back on the same path
      restarted = first.close().then(async () => {
        const again = await FakeCollector.start('socket', at);
        again.onCommand = (c) => c.event('control.accepted', { cause: c.command.id });
        return again;
      });
    };
    const command = instructCommand('sess-1', 'hi', { host: 'h' });
    const r = await sendCommand({ target: { kind: 'socket', path: at }, command, link });
    collector = await restarted!;
    expect(r).toMatchObject({ kind: 'ack', ack: { kind: 'accepted' }, deliveries: 2 });
    expect([...first.commands, ...collector.commands]).toEqual([command.line, command.line]);
  });

  it('dropped twice: given up after the one retry', async () => {
    collector = await FakeCollector.start('socket');
    collector.onCommand = (c) => c.conn.ws.terminate();
    const r = await sendCommand({ target: targetOf(collector), command: instructCommand('sess-1', 'hi', { host: 'h' }), link });
    expect(r).toEqual({ kind: 'failed', failure: { kind: 'dropped' }, deliveries: 2 });
    expect(collector.commands).toHaveLength(2);
    expect(new Set(collector.commands).size).toBe(1);
  });

  it('no daemon: unreachable, nothing retried', async () => {
    const r = await sendCommand({ target: { kind: 'socket', path: '/nonexistent/hermes-aep.sock' }, command: instructCommand('s', 'hi', { host: 'h' }), link });
    expect(r).toMatchObject({ kind: 'failed', failure: { kind: 'unreachable', code: 'ENOENT' }, deliveries: 0 });
  });

  it('a wrong token: the HTTP refusal, its reason, never the token', async () => {
    collector = await FakeCollector.start('tcp');
    collector.token = TOKEN;
    const r = await sendCommand({ target: targetOf(collector, 'the-wrong-token-0123'), command: instructCommand('s', 'hi', { host: 'h' }), link });
    expect(r).toEqual({ kind: 'failed', failure: { kind: 'http', status: 401, error: 'unauthorized', message: 'token please' }, deliveries: 0 });
    expect(JSON.stringify(r)).not.toContain('the-wrong-token');
  });
});
