import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createDiagnostics } from '../../../../src/core/logger.js';
import { ROOT } from '../../../support/paths.js';
import { waitFor } from '../../../support/processes.js';
import { openSse, type SseClient } from './sse-client.js';
import { event, ndjson, testStream, TOKEN, type StreamOptions } from './stream-server.js';

const open: { s: ReturnType<typeof testStream>; clients: SseClient[] }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    o.clients.forEach((c) => c.close());
    await o.s.app.close();
  }
});

const bearer = { authorization: `Bearer ${TOKEN}` };

async function listening(o: StreamOptions = {}) {
  const s = testStream({ token: TOKEN, ...o });
  await s.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (s.app.server.address() as AddressInfo).port;
  const entry = { s, clients: [] as SseClient[] };
  open.push(entry);
  const sse = async (q: string, headers: Record<string, string> = bearer) => {
    const c = await openSse(port, `/stream${q}`, headers);
    entry.clients.push(c);
    return c;
  };
  const post = (events: readonly Record<string, unknown>[]) =>
    s.app.inject({
      method: 'POST',
      url: '/events',
      payload: ndjson(events),
      headers: { ...bearer, 'aep-version': '0.1', 'content-type': 'application/x-ndjson' },
    });
  return { ...s, port, sse, post };
}

const enc = (v: unknown) => encodeURIComponent(JSON.stringify(v));
const seqs = (c: SseClient) => c.data().map((l) => (JSON.parse(l) as { session: string; seq: number }).seq);

describe('GET /stream (AEP-0003 §3.3)', () => {
  it('§3.3 ingest fan-out: a batch POSTed reaches a filtered SSE subscriber byte-identical, with event/id fields and SSE headers', async () => {
    const d = await listening();
    const c = await d.sse(`?filter=${enc({ session: 's2', type: 'x.test.*' })}`);
    expect(c.status).toBe(200);
    expect(c.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(c.headers['cache-control']).toBe('no-cache');
    expect(c.headers['x-accel-buffering']).toBe('no');
    const batch = [event('s1', 0), event('s2', 0), event('s1', 1), event('s2', 1)];
    expect((await d.post(batch)).statusCode).toBe(202);
    await c.until('two s2 events', () => c.data().length === 2);
    expect(c.data()).toEqual([JSON.stringify(batch[1]), JSON.stringify(batch[3])]);
    expect(c.text()).toContain(`event: x.test.ping.sent\nid: s2:0:0\ndata: ${JSON.stringify(batch[1])}\n\n`);
  });

  it('§3.3.2: agent-scoped events carry no id field', async () => {
    const d = await listening();
    const c = await d.sse('');
    const agentScoped = { ...event('x', 0), type: 'agent.started' } as Record<string, unknown>;
    delete agentScoped['session'];
    delete agentScoped['seq'];
    expect((await d.post([agentScoped])).statusCode).toBe(202);
    await c.until('the agent event', () => c.data().length === 1);
    expect(c.text()).toContain(`event: agent.started\ndata: ${JSON.stringify(agentScoped)}\n\n`);
    expect(c.text()).not.toContain('id:');
  });

  it('§7 resume via from: strictly after the position, live=0 ends after the replay; from wins over Last-Event-ID', async () => {
    const d = await listening();
    await d.post([0, 1, 2, 3, 4].map((n) => event('s1', n)));
    const c = await d.sse(`?live=0&from=${enc([{ session: 's1', epoch: 0, seq: 1 }])}`, { ...bearer, 'last-event-id': 's1:0:3' });
    await c.until('the end of the replay', () => c.ended());
    expect(seqs(c)).toEqual([2, 3, 4]);
  });

  it('§3.3.3 resume via Last-Event-ID: replay after it, then live delivery', async () => {
    const d = await listening();
    await d.post([0, 1, 2].map((n) => event('s:1', n)));
    const c = await d.sse('', { ...bearer, 'last-event-id': 's:1:0:1' });
    await c.until('the replayed event', () => c.data().length === 1);
    await d.post([event('s:1', 3)]);
    await c.until('the live event', () => c.data().length === 2);
    expect(seqs(c)).toEqual([2, 3]);
  });

  it('§3.3.3: a position older than the buffer → a replay-exhausted comment before what is held; from=all replays all', async () => {
    const d = await listening({ buffer: 3 });
    await d.post([0, 1, 2, 3, 4, 5].map((n) => event('s1', n)));
    await d.post([event('s2', 0)]);
    const c = await d.sse(`?live=0&from=${enc([{ session: 's1', epoch: 0, seq: 0 }])}`);
    await c.until('the end', () => c.ended());
    expect(c.text().startsWith(': replay-exhausted s1 0:3\n\n')).toBe(true);
    expect(seqs(c)).toEqual([3, 4, 5]);
    const all = await d.sse('?live=0&from=all');
    await all.until('the end', () => all.ended());
    expect(all.text()).not.toContain('replay-exhausted');
    expect(all.data().map((l) => (JSON.parse(l) as { session: string }).session)).toEqual(['s1', 's1', 's1', 's2']);
  });

  it('§6.4 capture-downlevel: a ceiling down-levels what is delivered; without one the bytes are as received', async () => {
    const d = await listening();
    const corpus = JSON.parse(readFileSync(path.join(ROOT, 'fixtures/aep/downlevel/cases.json'), 'utf8')) as {
      cases: { ceiling: string; event: Record<string, unknown>; expect_capture: string; expect_data: unknown }[];
    };
    const dl1 = corpus.cases[0]!;
    expect(JSON.stringify(dl1.event)).toContain('SECRET');
    expect((await d.post([dl1.event])).statusCode).toBe(202);
    const capped = await d.sse(`?live=0&from=all&capture=${dl1.ceiling}`);
    const plain = await d.sse('?live=0&from=all');
    await capped.until('the end', () => capped.ended());
    await plain.until('the end', () => plain.ended());
    const got = JSON.parse(capped.data()[0]!) as Record<string, unknown>;
    expect([got['capture'], got['data']]).toEqual([dl1.expect_capture, dl1.expect_data]);
    expect(capped.text()).not.toContain('SECRET');
    expect(plain.data()).toEqual([JSON.stringify(dl1.event)]);
  });

  it('§6.2 reject-invalid: a bad filter, capture, from, Last-Event-ID or live → 400 invalid-filter (fail closed)', async () => {
    const d = await listening();
    for (const q of [
      `?filter=${enc({ data: 1 })}`,
      '?filter=%7B',
      `?filter=${enc([1])}`,
      '?capture=everything',
      '?from=%5B%7B',
      `?from=${enc({ s: 1 })}`,
      '?live=2',
    ]) {
      const c = await d.sse(q);
      expect([q, c.status]).toEqual([q, 400]);
      await c.until('the reply', () => c.ended());
      expect((JSON.parse(c.text()) as { error: string }).error).toBe('invalid-filter');
    }
    const badId = await d.sse('', { ...bearer, 'last-event-id': 'nonsense' });
    expect(badId.status).toBe(400);
  });

  it('a hub refusal (subscription cap) → 429 limit-exceeded', async () => {
    const d = await listening({ subscriptions: 1 });
    const first = await d.sse('');
    expect(first.status).toBe(200);
    const second = await d.sse('');
    expect(second.status).toBe(429);
    await second.until('the reply', () => second.ended());
    expect(JSON.parse(second.text())).toEqual({ error: 'limit-exceeded', detail: 'subscriptions: at most 1' });
  });

  it('§3.3.4 heartbeat comments; a kick writes `: closing <reason>` and ends; a client gone closes its subscription', async () => {
    const d = await listening({ heartbeatMs: 40 });
    const c = await d.sse('');
    await c.until('a ping', (t) => t.includes(': ping\n\n'));
    d.hub.close('daemon stopping');
    await c.until('the end', () => c.ended());
    expect(c.text().endsWith(': closing daemon stopping\n\n')).toBe(true);
    const gone = await d.sse('');
    await waitFor('the subscription', () => d.hub.stats()['subscribers'] === 1 || undefined);
    gone.close();
    await waitFor('the subscription to close', () => d.hub.stats()['subscribers'] === 0 || undefined);
  });
});

describe('SSE access (AEP-0003 §8.1, §11)', () => {
  it('?access_token works for GET /stream, a wrong one is 401, and neither value ever reaches a log line', async () => {
    const lines: string[] = [];
    const log = createDiagnostics(true, { write: (s: string) => void lines.push(s) });
    const d = await listening({ log, allowedOrigins: ['https://dash.example'] });
    const marker = 'MARKER' + 'ab'.repeat(20);
    const wrong = await d.sse(`?access_token=${marker}`, {});
    expect(wrong.status).toBe(401);
    await wrong.until('the reply', () => wrong.ended());
    expect(wrong.text()).not.toContain(marker);
    const right = await d.sse(`?access_token=${TOKEN}`, { origin: 'https://dash.example' });
    expect(right.status).toBe(200);
    expect(right.headers['access-control-allow-origin']).toBe('https://dash.example');
    const hostile = await d.sse('', { ...bearer, origin: 'https://evil.example' });
    expect(hostile.status).toBe(403);
    const health = await d.app.inject({ method: 'GET', url: '/healthz', headers: { host: '127.0.0.1' } });
    expect(lines.some((l) => l.includes('stream request refused'))).toBe(true);
    expect(lines.join('') + health.body).not.toMatch(/MARKER|abababab/);
  });
});
