import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { httpCall, startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../../support/processes.js';
import { keyedSession } from '../../support/hook-client.js';
import { pythonDeliveries, type Delivery } from '../../support/hermes-webhook.js';
import { requirePython } from '../../support/python.js';
import { historyEvents } from '../../support/history-lines.js';

/**
 * POST /webhook against the built daemon, with deliveries built and signed by
 * python3 as Hermes's outbound webhooks make them (test/support/hermes-webhook.ts),
 * never by the daemon's code: forged, stale, replayed (also after a restart),
 * foreign-Host and unsigned deliveries are refused or answered without being
 * processed, and counted; an accepted one is in the history once, as POST /hook
 * makes the same envelope.
 */
let daemon: DaemonProcess | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});
beforeAll(() => requirePython());

const secretOf = (d: DaemonProcess) => readFileSync(path.join(d.stateDir, 'webhook-secret'), 'utf8').trim();
const post = (d: DaemonProcess, w: Delivery, o: { body?: Buffer; headers?: Record<string, string | number> } = {}) =>
  httpCall({ url: d.url }, { method: 'POST', path: '/webhook', headers: { host: '127.0.0.1', ...w.headers, ...o.headers }, body: o.body ?? w.body });
const webhookStats = async (d: DaemonProcess) => (await d.health()).transport.webhook as Record<string, number>;

/**
 * A session's events as the transports can make them alike: its Hermes session id replaced, the daemon's own
 * ids, times and positions dropped, and `cause` as the index of the event it names within the session.
 */
function comparable(events: Record<string, any>[], sid: string): unknown[] {
  const index = new Map(events.map((e, i) => [e.id as string, i]));
  return events.map((ev) => {
    const { id: _id, time: _time, seq: _seq, session: _session, epoch: _epoch, traceparent: _tp, cause, ...rest } = ev;
    return { ...JSON.parse(JSON.stringify(rest).replaceAll(sid, 'SID')), ...(cause !== undefined ? { cause: index.get(cause as string) ?? 'outside' } : {}) };
  });
}
const ofSession = (events: Record<string, any>[], sid: string) => events.filter((e) => JSON.stringify(e).includes(sid));

const envelopes = (sid: string) => keyedSession(sid, 2).map((h) => JSON.parse(h.body) as Record<string, unknown>);

describe('POST /webhook (Hermes outbound webhooks) against the built daemon', () => {
  it('accepts a signed session once each, making the history POST /hook makes of the same envelopes, without the hook token', async () => {
    const recordDir = path.join(tempDir(), 'record');
    daemon = await startDaemonProcess({ AEP_RECORD_DIR: recordDir });
    const secret = secretOf(daemon);
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(path.join(daemon.stateDir, 'webhook-secret')).mode & 0o777).toBe(0o600);
    const viaWebhook = pythonDeliveries(envelopes('wh-sess').map((envelope) => ({ envelope, secret })));
    const t0 = performance.now();
    for (const w of viaWebhook) {
      const r = await post(daemon, w);
      expect([r.status, r.body]).toEqual([200, '{}']);
    }
    console.log(`${viaWebhook.length} webhook deliveries accepted in ${(performance.now() - t0).toFixed(1)} ms`);
    // the same envelopes (with profile, as the shell hook of the same Hermes sends it) through POST /hook
    for (const env of envelopes('hk-sess')) {
      const body = JSON.stringify({ ...env, profile: 'default' });
      const r = await httpCall(
        { url: daemon.url },
        { method: 'POST', path: '/hook', headers: { host: '127.0.0.1', 'content-type': 'application/json', ...daemon.authHeaders }, body },
      );
      expect(r.status).toBe(200);
    }
    const events = historyEvents(daemon.historyDir);
    const wh = ofSession(events, 'wh-sess');
    const hk = ofSession(events, 'hk-sess');
    expect(wh.map((e) => e.type)).toEqual([
      'session.started',
      'run.started',
      'tool.requested',
      'tool.completed',
      'tool.requested',
      'tool.completed',
      'run.finished',
      'session.ended',
    ]);
    expect(comparable(wh, 'wh-sess')).toEqual(comparable(hk, 'hk-sess'));
    // the envelope handed on is the shell hook's: the recorder (verbatim envelopes) has the same lines for both sessions
    await waitFor('16 envelopes recorded', async () => ((await daemon!.health()).recorder?.recorded === 16 ? true : undefined));
    // (as values: Hermes orders `profile` differently in the two payloads, agent/outbound_webhooks.py 1fda2280 vs agent/shell_hooks.py 00067189)
    const recorded = (sid: string) =>
      readFileSync(path.join(recordDir, `${sid}.jsonl`), 'utf8')
        .replaceAll(sid, 'SID')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown);
    expect(recorded('wh-sess')).toEqual(recorded('hk-sess'));
    for (const w of viaWebhook) expect(JSON.stringify(wh)).not.toContain(w.deliveryId);
    expect(await webhookStats(daemon)).toMatchObject({ accepted: 8, replayed: 0, bad_signature: 0, stale: 0, malformed: 0, unavailable: 0, dedupe_kept: 8 });
    // /hook over TCP still needs the hook token: /webhook's exemption is its own
    const noToken = await httpCall(
      { url: daemon.url },
      { method: 'POST', path: '/hook', headers: { host: '127.0.0.1', 'content-type': 'application/json' }, body: JSON.stringify(envelopes('x')[0]) },
    );
    expect([noToken.status, JSON.parse(noToken.body).error]).toEqual([401, 'unauthorized']);
  });

  it('refuses forged, unsigned, stale, mismatched and foreign-Host deliveries, counting each, recording none', async () => {
    daemon = await startDaemonProcess();
    const secret = secretOf(daemon);
    const [env] = envelopes('forged');
    const [good, wrongSecret, stalePast, staleFuture, mismatch] = pythonDeliveries([
      { envelope: env!, secret },
      { envelope: env!, secret: 'f'.repeat(64) },
      { envelope: env!, secret, offsetS: -600 },
      { envelope: env!, secret, offsetS: 600 },
      { envelope: env!, secret },
    ]);
    const flipped = Buffer.from(good!.body);
    const at = flipped.indexOf('forged');
    flipped[at] = flipped[at]! ^ 0x20; // 'forged' -> 'Forged', one bit of one byte
    const expectRefused = async (r: Promise<{ status: number; body: string }>, status: number, code: string) => {
      const got = await r;
      expect([got.status, JSON.parse(got.body).error]).toEqual([status, code]);
      // a refusal never quotes the body
      expect(got.body).not.toContain('forged');
    };
    await expectRefused(post(daemon, wrongSecret!), 401, 'bad-signature');
    await expectRefused(post(daemon, good!, { body: flipped }), 401, 'bad-signature');
    const { 'x-hermes-signature-256': _sig, ...unsigned } = good!.headers;
    await expectRefused(
      httpCall({ url: daemon.url }, { method: 'POST', path: '/webhook', headers: { host: '127.0.0.1', ...unsigned }, body: good!.body }),
      401,
      'bad-signature',
    );
    await expectRefused(post(daemon, stalePast!), 400, 'stale-delivery');
    await expectRefused(post(daemon, staleFuture!), 400, 'stale-delivery');
    await expectRefused(post(daemon, mismatch!, { headers: { 'x-hermes-event': 'post_tool_call' } }), 400, 'delivery-mismatch');
    await expectRefused(post(daemon, mismatch!, { headers: { 'x-hermes-delivery': 'a'.repeat(32) } }), 400, 'delivery-mismatch');
    await expectRefused(post(daemon, good!, { headers: { host: 'evil.example' } }), 403, 'forbidden-host');
    const health = await daemon.health();
    expect(health.transport.webhook).toMatchObject({ accepted: 0, bad_signature: 3, stale: 2, malformed: 2, replayed: 0 });
    expect(health.transport.refused.host).toBe(1);
    expect(health.hooks).toBe(0);
    expect(historyEvents(daemon.historyDir)).toEqual([]);
  });

  it('answers a replayed delivery 200 without processing it again, also after a restart', async () => {
    daemon = await startDaemonProcess();
    const dirs = { historyDir: daemon.historyDir, stateDir: daemon.stateDir };
    const secret = secretOf(daemon);
    const [first, second] = pythonDeliveries(
      envelopes('replay')
        .slice(0, 2)
        .map((envelope) => ({ envelope, secret })),
    );
    expect((await post(daemon, first!)).status).toBe(200);
    const again = await post(daemon, first!);
    expect([again.status, again.body]).toEqual([200, '{}']);
    expect(await webhookStats(daemon)).toMatchObject({ accepted: 1, replayed: 1 });
    expect((await daemon.health()).hooks).toBe(1);
    expect(await daemon.stop()).toBe(0);

    daemon = await startDaemonProcess({}, dirs);
    // the same secret is kept across the restart (never overwritten)
    expect(secretOf(daemon)).toBe(secret);
    const afterRestart = await post(daemon, first!);
    expect([afterRestart.status, afterRestart.body]).toEqual([200, '{}']);
    expect(await webhookStats(daemon)).toMatchObject({ accepted: 0, replayed: 1, dedupe_kept: 1 });
    expect((await daemon.health()).hooks).toBe(0);
    // a new delivery is still processed
    expect((await post(daemon, second!)).status).toBe(200);
    await waitFor('two events in the history', () => (historyEvents(daemon!.historyDir).length === 2 ? true : undefined));
    expect(historyEvents(daemon.historyDir).map((e) => e.type)).toEqual(['session.started', 'run.started']);
  });
});
