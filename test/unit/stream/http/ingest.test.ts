import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../../../support/paths.js';
import { event, ndjson, OWN_PREFIX, testStream, TOKEN } from './stream-server.js';

const apps: ReturnType<typeof testStream>[] = [];
const stream = (o: Parameters<typeof testStream>[0] = {}) => {
  const s = testStream({ token: TOKEN, ...o });
  apps.push(s);
  return s;
};
afterEach(async () => {
  await Promise.all(apps.splice(0).map((s) => s.app.close()));
});

const auth = { authorization: `Bearer ${TOKEN}`, 'aep-version': '0.1', host: '127.0.0.1:8393' };
const post = (s: ReturnType<typeof testStream>, payload: string, headers: Record<string, string> = {}) =>
  s.app.inject({ method: 'POST', url: '/events', payload, headers: { ...auth, 'content-type': 'application/x-ndjson', ...headers } });

describe('discovery (AEP-0003 §3.4)', () => {
  it.each(['/events', '/.well-known/aep'])('GET %s returns the discovery document as application/json', async (url) => {
    const s = stream({ buffer: 321 });
    const r = await s.app.inject({ method: 'GET', url, headers: auth });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.json()).toEqual({
      aep: ['0.1'],
      role: 'collector',
      endpoints: { events: '/events', stream: '/stream', socket: '/socket' },
      capabilities: {
        filters: ['attr-match'],
        replay: { buffer: 321, all: true },
        capture: ['none', 'metadata', 'redacted', 'full'],
        control: { accepts: [], ack_window_ms: 10_000 },
        roster: {},
        experimental: {},
      },
    });
  });
});

describe('POST /events (AEP-0003 §3.2)', () => {
  it('§3.2.2: a missing or unsupported major AEP-Version → 426 {"versions":["0.1"]}, nothing ingested', async () => {
    const s = stream();
    for (const v of [undefined, '1.0', '2', 'x', '']) {
      const headers: Record<string, string> = { ...auth, 'content-type': 'application/x-ndjson' };
      if (v === undefined) delete headers['aep-version'];
      else headers['aep-version'] = v;
      const r = await s.app.inject({ method: 'POST', url: '/events', payload: ndjson([event('s1', 0)]), headers });
      expect([r.statusCode, r.json()]).toEqual([426, { versions: ['0.1'] }]);
    }
    expect(s.ingress.batches).toEqual([]);
  });

  it('§3.2.1: an NDJSON batch is accepted in order with its bytes kept; blank lines ignored; 202 {accepted, duplicates}', async () => {
    const s = stream();
    const lines = [event('s1', 0), event('s1', 1), event('s2', 0)].map((e) => JSON.stringify(e));
    const r = await post(s, `${lines[0]}\n\n${lines[1]}\r\n  \n${lines[2]}`);
    expect([r.statusCode, r.json()]).toEqual([202, { accepted: 3, duplicates: 0 }]);
    expect(s.ingress.batches[0]!.map((w) => w.line)).toEqual(lines);
    expect(s.ingress.batches[0]!.every((w) => w.origin === 'ingest')).toBe(true);
    const again = await post(s, lines[0]!);
    expect([again.statusCode, again.json()]).toEqual([202, { accepted: 0, duplicates: 1 }]);
  });

  it('§3.2.1: a single application/json event keeps its one-line bytes; a pretty-printed one is compacted', async () => {
    const s = stream();
    const one = ` ${JSON.stringify(event('s1', 0))} `;
    expect((await post(s, one, { 'content-type': 'application/json; charset=utf-8' })).statusCode).toBe(202);
    expect(s.ingress.batches[0]![0]!.line).toBe(one.trim());
    expect((await post(s, JSON.stringify(event('s1', 1), null, 2), { 'content-type': 'application/json' })).statusCode).toBe(202);
    expect(s.ingress.batches[1]![0]!.line).toBe(JSON.stringify(event('s1', 1)));
  });

  it('§3.2.3: any invalid event → 400 invalid-event naming the line, and nothing of the batch is taken', async () => {
    const s = stream();
    const bad = { ...event('s1', 1) } as Record<string, unknown>;
    delete bad['source'];
    const r = await post(s, ndjson([event('s1', 0), bad, event('s1', 2)]));
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toBe('invalid-event');
    expect(r.json().detail).toMatch(/^line 2: /);
    const notJson = await post(s, `${JSON.stringify(event('s1', 0))}\n{"aep":`);
    expect([notJson.statusCode, notJson.json().detail]).toEqual([400, 'line 2: not valid JSON']);
    expect(s.ingress.batches).toEqual([]);
  });

  // the multi-event cases (`events`) break stream-level rules (terminal exclusivity, seq order): not an envelope check's to catch
  it('§3.2.3: every single-event case of the invalid corpus is refused 400 invalid-event', async () => {
    const s = stream();
    const corpus = JSON.parse(readFileSync(path.join(ROOT, 'fixtures/aep/invalid/cases.json'), 'utf8')) as { cases: { name: string; event?: unknown }[] };
    const single = corpus.cases.filter((c) => c.event !== undefined);
    expect(single.length).toBeGreaterThan(20);
    for (const c of single) {
      const body = JSON.stringify(c.event);
      const r = await post(s, body, { 'content-type': 'application/json' });
      expect([c.name, r.statusCode, r.json().error]).toEqual([c.name, 400, 'invalid-event']);
    }
    expect(s.ingress.batches).toEqual([]);
  });

  it("events claiming this daemon's own emitter are refused 400", async () => {
    const s = stream();
    const r = await post(s, ndjson([event('s1', 0, { source: `${OWN_PREFIX}session/s1`, agent: 'hermes' })]));
    expect([r.statusCode, r.json().error]).toEqual([400, 'invalid-event']);
    expect(s.ingress.batches).toEqual([]);
  });

  it('§3.2.3: other content types → 415; an oversize body or too many events → 413', async () => {
    const s = stream({ maxBodyBytes: 4096, ingestMaxEvents: 2 });
    const one = JSON.stringify(event('s1', 0));
    expect((await post(s, one, { 'content-type': 'text/plain' })).statusCode).toBe(415);
    expect((await post(s, one, { 'content-type': 'application/cloudevents+json' })).statusCode).toBe(415);
    expect((await post(s, ndjson([event('s1', 0), event('s1', 1), event('s1', 2)]))).statusCode).toBe(413);
    expect((await post(s, `${one}\n${' '.repeat(5000)}`)).statusCode).toBe(413);
    expect(s.ingress.batches).toEqual([]);
  });

  it('a body nesting past the depth bound is refused before it is parsed', async () => {
    const s = stream();
    const deep = event('s1', 0, { data: JSON.parse('['.repeat(100) + ']'.repeat(100)) as unknown });
    const r = await post(s, JSON.stringify(deep));
    expect([r.statusCode, r.json().detail]).toEqual([400, 'line 1: nests deeper than 64 levels']);
  });

  it('the bridge refusing the batch (durable write impossible) → 503', async () => {
    const s = stream();
    s.ingress.refuse = 'disk full';
    const r = await post(s, ndjson([event('s1', 0)]));
    expect([r.statusCode, r.json().error]).toEqual([503, 'unavailable']);
  });
});

describe('access (AEP-0003 §8.1)', () => {
  it('with AEP_TOKEN: no token or a wrong one → 401 on every stream route; the query token is not taken for POST', async () => {
    const s = stream();
    const bare = { host: '127.0.0.1', 'aep-version': '0.1' };
    expect((await s.app.inject({ method: 'GET', url: '/events', headers: bare })).statusCode).toBe(401);
    expect((await s.app.inject({ method: 'GET', url: '/stream', headers: { ...bare, authorization: 'Bearer nope' } })).statusCode).toBe(401);
    const viaQuery = await s.app.inject({
      method: 'POST',
      url: `/events?access_token=${TOKEN}`,
      payload: ndjson([event('s1', 0)]),
      headers: { ...bare, 'content-type': 'application/x-ndjson' },
    });
    expect(viaQuery.statusCode).toBe(401);
    expect(s.ingress.batches).toEqual([]);
  });

  it('without AEP_TOKEN, by default: reading needs the read token (the hook token), which cannot ingest', async () => {
    const READ = 'cd'.repeat(32);
    const s = testStream({ readToken: READ });
    apps.push(s);
    expect((await s.app.inject({ method: 'GET', url: '/events', headers: { host: 'localhost' } })).statusCode).toBe(401);
    expect((await s.app.inject({ method: 'GET', url: '/events', headers: { host: 'localhost', authorization: `Bearer ${READ}` } })).statusCode).toBe(200);
    const r = await s.app.inject({
      method: 'POST',
      url: '/events',
      payload: ndjson([event('s1', 0)]),
      headers: { host: 'localhost', authorization: `Bearer ${READ}`, 'aep-version': '0.1', 'content-type': 'application/x-ndjson' },
    });
    expect([r.statusCode, r.json().detail]).toEqual([401, 'set AEP_TOKEN to ingest or command over TCP']);
    expect(s.ingress.batches).toEqual([]);
  });

  it('without AEP_TOKEN, AEP_STREAM_READ=open: reading is open (watch), ingest → 401 with the reason', async () => {
    const s = testStream({ openRead: true });
    apps.push(s);
    expect((await s.app.inject({ method: 'GET', url: '/events', headers: { host: 'localhost' } })).statusCode).toBe(200);
    const r = await s.app.inject({
      method: 'POST',
      url: '/events',
      payload: ndjson([event('s1', 0)]),
      headers: { host: 'localhost', 'aep-version': '0.1', 'content-type': 'application/x-ndjson' },
    });
    expect([r.statusCode, r.json().detail]).toEqual([401, 'set AEP_TOKEN to ingest or command over TCP']);
  });

  it('an Origin: refused 403 unless allowed, and even then only for reading', async () => {
    const s = stream({ allowedOrigins: ['https://dash.example'] });
    const get = (origin: string) => s.app.inject({ method: 'GET', url: '/events', headers: { ...auth, origin } });
    expect((await get('https://evil.example')).statusCode).toBe(403);
    expect((await get('https://dash.example')).statusCode).toBe(200);
    expect((await post(s, ndjson([event('s1', 0)]), { origin: 'https://dash.example' })).statusCode).toBe(403);
    expect(s.ingress.batches).toEqual([]);
  });

  it('the request guard still checks the Host of stream routes, and still wants the hook token on /hook', async () => {
    const s = stream({ hookToken: 'ef'.repeat(32) });
    expect((await s.app.inject({ method: 'GET', url: '/events', headers: { ...auth, host: 'rebound.example' } })).statusCode).toBe(403);
    // the AEP token is not the hook token: /hook refuses it
    const hook = await s.app.inject({ method: 'POST', url: '/hook', payload: '{}', headers: { ...auth, 'content-type': 'application/json' } });
    expect(hook.statusCode).toBe(401);
    // and the stream routes do not want the hook token
    expect((await s.app.inject({ method: 'GET', url: '/events', headers: auth })).statusCode).toBe(200);
  });
});
