import { afterEach, describe, expect, it } from 'vitest';
import { event, wire } from './fakes.js';
import { Client, hello, startRig, type Rig } from './harness.js';

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
const CLOSED_SET = ['invalid-filter', 'unknown-dialect', 'unauthorized', 'limit-exceeded'];

describe('socket endpoint: subscriptions', () => {
  it('AEP-0003 §6.5: an over-size from and a malformed from are each refused in-band from the closed set; the connection survives', async () => {
    rig = await startRig();
    const c = await open(rig.url);
    const big = Array.from({ length: 1024 }, (_, i) => ({ session: `s-${i}`, epoch: 0, seq: 0 }));
    c.send(hello('consumer'));
    c.send({ type: 'subscribe', id: 'cap', filter: { type: ['agent.*'] }, from: big });
    c.send({ type: 'subscribe', id: 'cap-follow', filter: { type: ['agent.*'] } });
    c.send({ type: 'subscribe', id: 'mal', filter: { type: ['agent.*'] }, from: {} });
    c.send({ type: 'subscribe', id: 'mal-follow', filter: { type: ['agent.*'] } });
    await c.next((f) => f['id'] === 'mal-follow');
    const reply = (id: string) => c.got.find((f) => f['id'] === id)!;
    expect(reply('cap')).toMatchObject({ type: 'error', code: 'limit-exceeded' });
    expect(String(reply('cap')['detail'])).toContain('from');
    expect(reply('mal')).toMatchObject({ type: 'error', code: 'invalid-filter' });
    expect(reply('cap-follow')['type']).toBe('subscribed');
    expect(reply('mal-follow')['type']).toBe('subscribed');
    for (const f of c.got.filter((g) => g.type === 'error')) expect(CLOSED_SET).toContain(f['code']);
    expect(c.closed).toBeUndefined();
    expect(rig.hub.sinks.size).toBe(2);
  });

  it('AEP-0003 §6.5: an illegal filter key, a bad capture, a reused id and an emitter-role subscribe are refused; nothing subscribes', async () => {
    rig = await startRig({ token: 't' });
    const c = await open(`${rig.url}?access_token=t`, hello('consumer'));
    c.send({ type: 'subscribe', id: 'a', filter: { colour: 'red' } });
    c.send({ type: 'subscribe', id: 'b', capture: 'everything' });
    c.send({ type: 'subscribe', id: 'c' });
    c.send({ type: 'subscribe', id: 'c' });
    await c.sync();
    expect(c.got.filter((f) => f.type === 'error').map((f) => [f['id'], f['code']])).toEqual([
      ['a', 'invalid-filter'],
      ['b', 'invalid-filter'],
      ['c', 'invalid-filter'],
    ]);
    const e = await open(`${rig.url}?access_token=t`, hello('emitter'));
    e.send({ type: 'subscribe', id: 'x' });
    expect(await e.next((f) => f['id'] === 'x')).toMatchObject({ type: 'error', code: 'unauthorized' });
    expect(rig.hub.sinks.size).toBe(1);
  });

  it('AEP-0003 §5: from "all" replays every held session byte-identically after subscribed, with no replay-exhausted, then live', async () => {
    rig = await startRig();
    const held = [event('s1', 0), event('s1', 1, 'progress.status'), event('s2', 0)];
    const lines = held.map((e) => JSON.stringify(e, null, 0).replace('"aep":', '"aep" :'));
    rig.hub.publish(held.map((e, i) => ({ ...wire(e), line: lines[i]! })));
    const c = await open(rig.url, hello('consumer'));
    c.send({ type: 'subscribe', id: 'all', from: 'all' });
    await c.next((f) => f['id'] === held[2]!['id']);
    expect(c.got.map((f) => f.type)).toEqual(['hello', 'subscribed', 'session.started', 'progress.status', 'session.started']);
    expect(c.raw.slice(2)).toEqual(lines);
    rig.hub.publish([wire(event('s3', 0))]);
    await c.next((f) => f['session'] === 's3');
    expect(c.got.some((f) => f.type === 'replay-exhausted')).toBe(false);
  });

  it('AEP-0003 §5: a position predating the buffer draws replay-exhausted with the sub id before the replayed events', async () => {
    rig = await startRig();
    rig.hub.publish([wire(event('s1', 5)), wire(event('s1', 6))]);
    rig.hub.evicted.add('s1');
    const c = await open(rig.url, hello('consumer'));
    c.send({ type: 'subscribe', id: 'r1', filter: { session: 's1' }, from: [{ session: 's1', epoch: 0, seq: 1 }] });
    await c.next((f) => f['seq'] === 6);
    expect(c.got.map((f) => f.type)).toEqual(['hello', 'subscribed', 'replay-exhausted', 'session.started', 'session.started']);
    expect(c.got[2]).toEqual({ type: 'replay-exhausted', sub: 'r1', session: 's1', earliest: { epoch: 0, seq: 5 } });
  });

  it('AEP-0003 §6.5: several subscriptions per connection each deliver; unsubscribe is acknowledged and stops delivery', async () => {
    rig = await startRig();
    const c = await open(rig.url, hello('consumer'));
    c.send({ type: 'subscribe', id: 'one', filter: { session: 's1' } });
    c.send({ type: 'subscribe', id: 'any' });
    await c.next((f) => f['id'] === 'any');
    rig.hub.publish([wire(event('s1', 0))]);
    rig.hub.publish([wire(event('s2', 0))]);
    await c.next((f) => f['session'] === 's2');
    expect(c.got.filter((f) => f['session'] === 's1')).toHaveLength(2);
    c.send({ type: 'unsubscribe', id: 'any' });
    await c.next((f) => f.type === 'unsubscribed' && f['id'] === 'any');
    rig.hub.publish([wire(event('s2', 1, 'progress.status'))]);
    rig.hub.publish([wire(event('s1', 1, 'progress.status'))]);
    await c.next((f) => f['session'] === 's1' && f['seq'] === 1);
    await c.sync();
    expect(c.got.filter((f) => f['session'] === 's2')).toHaveLength(1);
  });

  it('AEP-0003 §3.5.4: on shutdown every connection gets closing with its delivered positions per subscription, then the close', async () => {
    rig = await startRig();
    const c = await open(rig.url, hello('consumer'));
    c.send({ type: 'subscribe', id: 'k' });
    await c.next((f) => f['id'] === 'k');
    rig.hub.publish([wire(event('s1', 0)), wire(event('s1', 1, 'progress.status')), wire(event('s2', 4))]);
    await c.next((f) => f['session'] === 's2');
    await rig.endpoint.close('daemon stopping');
    const closing = await c.next((f) => f.type === 'closing');
    expect(closing).toEqual({
      type: 'closing',
      reason: 'daemon stopping',
      delivered: [
        { sub: 'k', session: 's1', epoch: 0, seq: 1 },
        { sub: 'k', session: 's2', epoch: 0, seq: 4 },
      ],
    });
    expect((await c.whenClosed()).code).toBe(1001);
    expect(rig.hub.sinks.size).toBe(0);
  });

  it('AEP-0003 §8.4: a hub kick (slow consumer) sends closing with positions and closes the connection', async () => {
    rig = await startRig();
    const c = await open(rig.url, hello('consumer'));
    c.send({ type: 'subscribe', id: 'slow', filter: { session: 's9' } });
    await c.next((f) => f['id'] === 'slow');
    rig.hub.publish([wire(event('s9', 3))]);
    await c.next((f) => f['session'] === 's9');
    rig.hub.close('slow consumer: 9 MB pending');
    expect(await c.next((f) => f.type === 'closing')).toMatchObject({
      reason: 'slow consumer: 9 MB pending',
      delivered: [{ sub: 'slow', session: 's9', epoch: 0, seq: 3 }],
    });
    expect((await c.whenClosed()).code).toBe(1013);
    expect(rig.endpoint.stats()['kicked']).toBe(1);
  });

  it('AEP-0003 §8.4 seam: pending() counts bytes not yet sent and drained() settles once the client has taken them', async () => {
    rig = await startRig();
    const c = await open(rig.url, hello('consumer'));
    c.send({ type: 'subscribe', id: 'bulk' });
    await c.next((f) => f['id'] === 'bulk');
    const sink = [...rig.hub.sinks][0]!;
    const pad = 'x'.repeat(64 * 1024);
    const big = Array.from({ length: 64 }, (_, i) => ({ ...wire(event('s1', i)), line: JSON.stringify({ seq: i, pad }) }));
    rig.hub.publish(big);
    expect(sink.pending()).toBeGreaterThan(0);
    await sink.drained();
    expect(sink.pending()).toBe(0);
    await c.next((f) => f['seq'] === 63);
  });
});
