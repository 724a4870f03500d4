// tail against a small real HTTP server speaking the SSE binding (AEP-0003 §3.3): the query it
// sends, reconnect after the stream ends with Last-Event-ID (and `from` for several sessions),
// no duplicate printed, the token only in the Authorization header, and a refusal reported
// without it.
import { rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { plainStyler } from '../../../src/tail/color.js';
import { compileLocalFilter } from '../../../src/tail/local-filter.js';
import type { TailPlan } from '../../../src/tail/options.js';
import { runTail } from '../../../src/tail/tail.js';
import { tempDir, waitFor } from '../../support/processes.js';

const ev = (session: string | undefined, seq: number | undefined, id: string) =>
  JSON.stringify({
    aep: '0.1',
    id,
    type: session ? 'tool.completed' : 'agent.heartbeat',
    time: '2026-07-03T10:15:04.221Z',
    source: 'aep://h/agent/hermes',
    agent: 'hermes',
    ...(session ? { session, seq, epoch: 0 } : {}),
  });
const frame = (line: string) => {
  const e = JSON.parse(line) as { type: string; session?: string; seq?: number };
  return `event: ${e.type}\n${e.session !== undefined ? `id: ${e.session}:0:${e.seq}\n` : ''}data: ${line}\n\n`;
};

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;
async function serve(handler: Handler, on: 'socket' | 'tcp', at?: string): Promise<{ where: string; requests: IncomingMessage[]; close: () => void }> {
  const requests: IncomingMessage[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req);
    handler(req, res, requests.length);
  });
  const where = on === 'socket' ? (at ?? path.join(tempDir(), 's.sock')) : '';
  if (at !== undefined) rmSync(at, { force: true });
  await new Promise<void>((r) => (on === 'socket' ? server.listen(where, r) : server.listen(0, '127.0.0.1', r)));
  const close = () => {
    server.closeAllConnections();
    server.close();
  };
  closers.push(close);
  return { where: on === 'socket' ? where : `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`, requests, close };
}

const sse = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });

function plan(over: Partial<TailPlan>): TailPlan {
  const f = compileLocalFilter({});
  if ('error' in f) throw new Error(f.error);
  return { target: { kind: 'socket', path: '/nonexistent' }, historyRoot: tempDir(), localFilter: f.filter, json: true, follow: true, ...over };
}

function start(p: TailPlan, idleMs?: number) {
  const out: string[] = [];
  const err: string[] = [];
  const stop = new AbortController();
  closers.push(() => stop.abort());
  const done = runTail(p, { out: (l) => out.push(l), err: (l) => err.push(l), style: plainStyler }, stop.signal, {
    backoffMs: { min: 10, max: 20 },
    rescanMs: 50,
    ...(idleMs !== undefined ? { idleMs } : {}),
  });
  return { out, err, stop, done };
}

describe('tail over SSE', () => {
  it('AEP-0003 §3.3: reconnects after the stream ends, resuming with Last-Event-ID and from; a replayed duplicate is not printed', async () => {
    const [a1, b5, hb, b6] = [ev('s_a', 1, 'e1'), ev('s_b', 5, 'e2'), ev(undefined, undefined, 'e3'), ev('s_b', 6, 'e4')];
    const srv = await serve((_req, res, n) => {
      sse(res);
      if (n === 1) {
        res.write(': ping\n\n');
        res.end(frame(a1) + frame(b5) + frame(hb)); // the daemon goes away
      } else {
        res.write(': replay-exhausted s_b 0:5\n\n' + frame(b5) + frame(b6)); // b5 again: a legal duplicate
      }
    }, 'socket');
    const t = start(plan({ target: { kind: 'socket', path: srv.where }, filter: '{"agent":"hermes"}', capture: 'metadata' }));
    await waitFor('the event after the reconnect', () => t.out.includes(b6) || undefined);
    expect(t.out).toEqual([a1, b5, hb, b6]);
    const first = new URL(srv.requests[0]!.url!, 'http://x');
    expect(first.pathname).toBe('/stream');
    expect(first.searchParams.get('filter')).toBe('{"agent":"hermes"}');
    expect(first.searchParams.get('capture')).toBe('metadata');
    expect(first.searchParams.has('from')).toBe(false);
    expect(first.searchParams.has('live')).toBe(false);
    expect(srv.requests[0]!.headers['last-event-id']).toBeUndefined();
    expect(srv.requests[0]!.headers['authorization']).toBeUndefined();
    const second = new URL(srv.requests[1]!.url!, 'http://x');
    expect(srv.requests[1]!.headers['last-event-id']).toBe('s_b:0:5');
    expect(JSON.parse(second.searchParams.get('from')!)).toEqual([
      { session: 's_a', epoch: 0, seq: 1 },
      { session: 's_b', epoch: 0, seq: 5 },
    ]);
    expect(second.searchParams.get('filter')).toBe('{"agent":"hermes"}');
    expect(t.err.join('\n')).toContain('stream lost: reconnecting');
    expect(t.err.join('\n')).toContain('session s_b: replay starts at 0:5');
    t.stop.abort();
    await expect(t.done).resolves.toBe(0);
  });

  it('AEP-0003 §3.3: a daemon restart (socket gone, then back) is ridden out, resuming after the last event shown', async () => {
    const [a1, a2] = [ev('s_a', 1, 'r1'), ev('s_a', 2, 'r2')];
    const first = await serve((_req, res) => {
      sse(res);
      res.write(frame(a1));
    }, 'socket');
    const t = start(plan({ target: { kind: 'socket', path: first.where } }));
    await waitFor('the first event', () => t.out.includes(a1) || undefined);
    first.close();
    await waitFor('the lost stream', () => t.err.some((l) => l.includes('stream lost')) || undefined);
    const second = await serve(
      (_req, res) => {
        sse(res);
        res.write(frame(a2));
      },
      'socket',
      first.where,
    );
    await waitFor('the event from the restarted daemon', () => t.out.includes(a2) || undefined);
    expect(second.requests[0]!.headers['last-event-id']).toBe('s_a:0:1');
    expect(t.out).toEqual([a1, a2]);
    expect(t.err.some((l) => l.includes('reconnected'))).toBe(true);
  });

  it('a stream silent past the idle bound (no event, no ping) is dropped and reopened', async () => {
    // a stream that goes quiet, then an answer that never comes (not even headers), then a stream again
    const line = ev('s_a', 1, 'q1');
    const srv = await serve((_req, res, n) => {
      if (n === 2) return;
      sse(res);
      if (n === 1) res.write(frame(line));
      else res.flushHeaders();
    }, 'socket');
    const t = start(plan({ target: { kind: 'socket', path: srv.where } }), 150);
    await waitFor('a third connection', () => srv.requests.length >= 3 || undefined);
    expect(t.out).toEqual([line]);
    expect(t.err.some((l) => l.includes('stream lost'))).toBe(true);
    t.stop.abort();
    await expect(t.done).resolves.toBe(0);

    // silence on the very first attempt is reported, not read as "no daemon"
    const mute = await serve(() => undefined, 'socket');
    const m = start(plan({ target: { kind: 'socket', path: mute.where } }), 150);
    await expect(m.done).resolves.toBe(1);
    expect(m.err.join('\n')).toContain('cannot reach unix:');
    expect(m.err.join('\n')).toContain('ETIMEDOUT');
  });

  it('one session seen: the reconnect carries Last-Event-ID only; --no-follow sends live=0 and stops at the end', async () => {
    const line = ev('s_a', 3, 'x1');
    const srv = await serve((_req, res, n) => {
      sse(res);
      res.end(n === 1 ? frame(line) : '');
    }, 'socket');
    const t = start(plan({ target: { kind: 'socket', path: srv.where } }));
    await waitFor('the second connection', () => srv.requests.length >= 2 || undefined);
    expect(srv.requests[1]!.headers['last-event-id']).toBe('s_a:0:3');
    expect(new URL(srv.requests[1]!.url!, 'http://x').searchParams.has('from')).toBe(false);
    t.stop.abort();
    await t.done;

    const once = start(plan({ target: { kind: 'socket', path: srv.where }, follow: false, from: 'all' }));
    await expect(once.done).resolves.toBe(0);
    const q = new URL(srv.requests[srv.requests.length - 1]!.url!, 'http://x').searchParams;
    expect(q.get('live')).toBe('0');
    expect(q.get('from')).toBe('all');
  });

  it('TCP: the token goes in the Authorization header only; a refusal is reported without it', async () => {
    const token = 'tok-SECRET-MARKER-0123456789';
    const srv = await serve((req, res) => {
      if (req.headers['authorization'] !== `Bearer ${token}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized","message":"a valid token is required"}');
        return;
      }
      sse(res);
      res.end(frame(ev('s_a', 0, 'ok')));
    }, 'tcp');
    const good = start(plan({ target: { kind: 'url', url: new URL(srv.where), token }, follow: false }));
    await expect(good.done).resolves.toBe(0);
    expect(good.out).toHaveLength(1);
    expect(srv.requests[0]!.url).not.toContain(token);

    const bad = start(plan({ target: { kind: 'url', url: new URL(srv.where), token: 'tok-WRONG-MARKER-0123456789' }, follow: false }));
    await expect(bad.done).resolves.toBe(1);
    const said = bad.err.join('\n');
    expect(said).toContain('401 unauthorized');
    expect(said).toContain('a valid token is required');
    expect(said).not.toContain('MARKER');
  });
});
