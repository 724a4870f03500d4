/**
 * The shim's own HTTP/1.1 exchange over node:net (src/shim/hook.cts `deliver`), as compiled and installed: the
 * exact Outcome for a real daemon and for peers that answer wrongly on purpose, then the same peers through the
 * whole shim process (stdout, exit code, spool). A peer here reads the request whole before it answers, unless the
 * test says otherwise, so `sent` is decided by the shim alone.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createRequire } from 'node:module';
import { createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { keyedSession } from '../../support/hook-client.js';
import { SHIM } from '../../support/paths.js';
import { runShim, startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../../support/processes.js';
import { readLogs } from '../../support/stream-invariants.js';

type Shim = typeof import('../../../src/shim/hook.cjs');
const { deliver, shouldSpool } = createRequire(import.meta.url)(SHIM) as Shim;

const TOKEN = 'cd'.repeat(32);
const ENVELOPE = '{"hook_event_name":"pre_llm_call","session_id":"s1"}';

/** What the peer got: the request head lines, and the body. */
type Got = { lines: string[]; body: Buffer };
type Answer = (sock: Socket, got: Got) => void;

let answer: Answer = (s) => s.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}');
let last: Got | undefined;
const open = new Set<Socket>();
let peer: Server;
let url: URL;

/** Reads one request (head, then Content-Length bytes of body), then lets `answer` reply. */
function onConnection(sock: Socket): void {
  open.add(sock);
  sock.on('close', () => open.delete(sock));
  sock.on('error', () => undefined);
  let buf = Buffer.alloc(0);
  const onData = (c: Buffer) => {
    buf = Buffer.concat([buf, c]);
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const lines = buf.toString('latin1', 0, end).split('\r\n');
    const length = Number(/^content-length: (\d+)$/im.exec(lines.join('\n'))?.[1] ?? 0);
    if (buf.length < end + 4 + length) return;
    sock.off('data', onData);
    last = { lines, body: buf.subarray(end + 4) };
    answer(sock, last);
  };
  sock.on('data', onData);
}

beforeAll(async () => {
  peer = createServer(onConnection);
  await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
  url = new URL(`http://127.0.0.1:${(peer.address() as { port: number }).port}/hook`);
});
afterEach(() => {
  for (const s of open) s.destroy();
  last = undefined;
});
afterAll(async () => {
  await new Promise((r) => peer.close(r));
});

/**
 * "At once, not at the deadline" without a clock: these exchanges get a deadline (LONG) twice their test's own timeout
 * (TEST_MS), and a peer that never closes. Waiting for the deadline would end in `timeout`, which no such test accepts,
 * and only after the test had already failed by timing out.
 */
const TEST_MS = 30_000;
const LONG = 2 * TEST_MS;
const tcp = (token: string | undefined) => ({ url, token });
const send = (ms = 2_000) => deliver(Buffer.from(ENVELOPE), tcp(TOKEN), ms);
const ok = (extra: string, body: string) => `HTTP/1.1 200 OK\r\n${extra}\r\n${body}`;

describe('the request the shim writes', () => {
  it('over TCP: POST to the URL path, Host, the token, the JSON type and length, Connection: close, then the body as is', async () => {
    expect(await send()).toEqual({ kind: 'delivered', reply: '{}' });
    expect(last!.lines).toEqual([
      'POST /hook HTTP/1.1',
      `Host: ${url.host}`,
      `Authorization: Bearer ${TOKEN}`,
      'Content-Type: application/json',
      `Content-Length: ${ENVELOPE.length}`,
      'Connection: close',
    ]);
    expect(last!.body.toString()).toBe(ENVELOPE);
  });

  it('no token: no Authorization line', async () => {
    await deliver(Buffer.from(ENVELOPE), tcp(undefined), 2_000);
    expect(last!.lines.filter((l) => /^authorization/i.test(l))).toEqual([]);
  });

  it('over a Unix socket: Host localhost, path /hook, never the token', async () => {
    const sockPath = path.join(tempDir(), 'peer.sock');
    const unix = createServer(onConnection);
    await new Promise<void>((r) => unix.listen(sockPath, r));
    try {
      expect(await deliver(Buffer.from(ENVELOPE), { socket: sockPath }, 2_000)).toEqual({ kind: 'delivered', reply: '{}' });
      expect(last!.lines.slice(0, 3)).toEqual(['POST /hook HTTP/1.1', 'Host: localhost', 'Content-Type: application/json']);
    } finally {
      for (const s of open) s.destroy();
      await new Promise((r) => unix.close(r));
    }
  });
});

describe('well-formed answers', () => {
  it('a 200 with a JSON object: that object; the body is cut at Content-Length', async () => {
    answer = (s) => s.end(ok('Content-Length: 19\r\nX-Other:  spaced  \r\n', '{"context":"hello"}trailing bytes'));
    expect(await send()).toEqual({ kind: 'delivered', reply: '{"context":"hello"}' });
  });

  it('a 200 without Content-Length: the body read to EOF', async () => {
    answer = (s) => s.end(ok('', '{"a":1}'));
    expect(await send()).toEqual({ kind: 'delivered', reply: '{"a":1}' });
  });

  it(
    'a 200 whose Content-Length is complete answers at once, without waiting for the peer to close',
    async () => {
      answer = (s) => s.write(ok('Content-Length: 7\r\n', '{"a":2}'));
      expect(await send(LONG)).toEqual({ kind: 'delivered', reply: '{"a":2}' });
    },
    TEST_MS,
  );

  it('a 200 with a body that is no JSON object, or over the 1 MiB bound: delivered, reply {}', async () => {
    answer = (s) => s.end(ok('Content-Length: 5\r\n', '[1,2]'));
    expect(await send()).toEqual({ kind: 'delivered', reply: '{}' });
    const big = JSON.stringify({ a: 'x'.repeat(1_100_000) });
    answer = (s) => s.end(ok('', big));
    expect(await send()).toEqual({ kind: 'delivered', reply: '{}' });
  });

  it('4xx: refused with its status, not spooled; 5xx: refused, spooled', async () => {
    answer = (s) => s.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n');
    const r401 = await send();
    expect([r401, shouldSpool(r401)]).toEqual([{ kind: 'refused', status: 401 }, false]);
    answer = (s) => s.end('HTTP/1.0 503 Service Unavailable\r\n\r\n');
    const r503 = await send();
    expect([r503, shouldSpool(r503)]).toEqual([{ kind: 'refused', status: 503 }, true]);
  });
});

describe('hostile or broken peers: the same Outcome a broken exchange always gave', () => {
  const broken = { kind: 'unreachable', sent: true };

  it.each([
    ['garbage', 'hello there\r\n\r\n{"context":"x"}'],
    ['HTTP/2 status line', 'HTTP/2 200\r\n\r\n{"context":"x"}'],
    ['a two-digit status', 'HTTP/1.1 20 OK\r\n\r\n{"context":"x"}'],
    ['an informational status', 'HTTP/1.1 100 Continue\r\n\r\n{"context":"x"}'],
    ['bare LF line ends', 'HTTP/1.1 200 OK\nContent-Length: 15\n\n{"context":"x"}'],
    ['a folded header', 'HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\n\r\n{"context":"x"}'],
    ['a field without a colon', 'HTTP/1.1 200 OK\r\nNoColon\r\n\r\n{"context":"x"}'],
    ['a space before the colon', 'HTTP/1.1 200 OK\r\nContent-Length : 15\r\n\r\n{"context":"x"}'],
    ['two different Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: 15\r\nContent-Length: 14\r\n\r\n{"context":"x"}'],
    ['a signed Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: +15\r\n\r\n{"context":"x"}'],
    ['a NUL in a field value', 'HTTP/1.1 200 OK\r\nX-A: a\0b\r\n\r\n{"context":"x"}'],
  ])('%s → unreachable after the whole request was sent (so never spooled)', async (_, raw) => {
    answer = (s) => s.end(raw);
    expect(await send()).toEqual(broken);
  });

  it('a status line, then nothing and no end of the head → timeout (sent), at the deadline', async () => {
    answer = (s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n');
    const t0 = performance.now();
    expect(await send(300)).toEqual({ kind: 'timeout', sent: true });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
  });

  it(
    'a head that never ends but keeps coming (a huge header block) → unreachable at once, not at the deadline',
    async () => {
      answer = (s) => s.write(`HTTP/1.1 200 OK\r\n${'X-Pad: y\r\n'.repeat(4_000)}`);
      expect(await send(LONG)).toEqual(broken);
    },
    TEST_MS,
  );

  it('a peer that closes mid-body → unreachable (sent), even with a valid JSON prefix', async () => {
    answer = (s) => s.end(ok('Content-Length: 40\r\n', '{"context":"x"}'));
    expect(await send()).toEqual(broken);
  });

  it('a peer that closes without a word → unreachable (sent)', async () => {
    answer = (s) => s.end();
    expect(await send()).toEqual(broken);
  });

  it(
    'a 5xx head, then the peer hangs: refused at once, not at the deadline',
    async () => {
      answer = (s) => s.write('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 100\r\n\r\n{"err');
      expect(await send(LONG)).toEqual({ kind: 'refused', status: 503 });
    },
    TEST_MS,
  );

  it('a 5xx before the body was read (a peer that never reads a large body): refused, sending stops, spooled', async () => {
    const early = createServer((s) => {
      open.add(s);
      s.on('error', () => undefined);
      s.pause();
      s.write('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n');
    });
    await new Promise<void>((r) => early.listen(0, '127.0.0.1', r));
    try {
      const to = new URL(`http://127.0.0.1:${(early.address() as { port: number }).port}/hook`);
      const o = await deliver(Buffer.alloc(48 * 1024 * 1024, 0x20), { url: to, token: undefined }, 60_000);
      expect([o, shouldSpool(o)]).toEqual([{ kind: 'refused', status: 503 }, true]);
    } finally {
      for (const s of open) s.destroy();
      await new Promise((r) => early.close(r));
    }
  });

  it('chunked transfer-encoding (a proxy in between): the status decides at once, a 200 body is not decoded → {}', async () => {
    const chunked = (status: string) => `HTTP/1.1 ${status}\r\nTransfer-Encoding: chunked\r\n\r\nf\r\n{"context":"x"}\r\n`;
    answer = (s) => s.write(chunked('200 OK'));
    expect(await send(60_000)).toEqual({ kind: 'delivered', reply: '{}' });
    answer = (s) => s.write(chunked('502 Bad Gateway'));
    expect(await send(60_000)).toEqual({ kind: 'refused', status: 502 });
  });
});

describe('through the whole shim process', () => {
  const spooled = (state: string) => (existsSync(path.join(state, 'spool')) ? readdirSync(path.join(state, 'spool')).filter((f) => f.endsWith('.hook')) : []);
  const run = (state: string, extra: Record<string, string> = {}) =>
    runShim(ENVELOPE, { AEP_HOOK_URL: url.href, AEP_STATE_DIR: state, AEP_INSTRUCT: '1', AEP_SHIM_TIMEOUT_MS: '2000', ...extra });

  it.each([
    ['garbage', (s: Socket) => s.end('garbage\r\n\r\n'), 0],
    ['a cut body', (s: Socket) => s.end(ok('Content-Length: 40\r\n', '{"context":"x"}')), 0],
    ['chunked', (s: Socket) => s.end('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nf\r\n{"context":"x"}\r\n0\r\n\r\n'), 0],
    ['a 503 that hangs', (s: Socket) => s.write('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 9\r\n\r\n'), 1],
  ] as const)('%s → {} on stdout, exit 0, nothing on stderr; spooled only for the 5xx', async (_, a, files) => {
    answer = a;
    const state = path.join(tempDir(), 'state');
    const r = await run(state);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '{}', '']);
    expect(spooled(state)).toHaveLength(files);
  });
});

describe('a peer that answers on the request head alone, without reading the body, then closes', () => {
  // node:http's server does exactly this when a handler answers before reading; the shim must have written its head and body in one
  // go, or its body write meets a closed socket (EPIPE) before it reads the answer: caught here in a separate process, as Hermes runs it
  it('the answer is delivered, every time (10 runs)', async () => {
    const sockPath = path.join(tempDir(), 'eager.sock');
    const eager = createHttpServer((_req, res) => res.end('{"context":"eager"}'));
    await new Promise<void>((r) => eager.listen(sockPath, r));
    try {
      for (let i = 0; i < 10; i++) {
        const r = await runShim(ENVELOPE, { AEP_INSTRUCT: '1', AEP_STATE_DIR: path.join(tempDir(), 'state') }, 'shim', ['--socket', sockPath]);
        expect([r.code, r.stdout, r.stderr], `run ${i}`).toEqual([0, '{"context":"eager"}', '']);
      }
    } finally {
      eager.closeAllConnections();
      await new Promise((r) => eager.close(r));
    }
  });
});

describe('against the real daemon', () => {
  let daemon: DaemonProcess;
  beforeAll(async () => {
    daemon = await startDaemonProcess();
  });
  afterAll(async () => {
    await daemon.stop();
  });

  it('over its Unix socket and its TCP port (with the token): delivered, in its history in order; no token over TCP: refused 401', async () => {
    expect(daemon.socketPath && daemon.url).toBeTruthy();
    const token = daemon.authHeaders.authorization?.replace('Bearer ', '');
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const hooks = keyedSession('shim-net-exchange', 1);
    for (const [k, h] of hooks.entries()) {
      const target = k % 2 ? { url: new URL(daemon.hookUrl), token } : { socket: daemon.socketPath };
      expect(await deliver(Buffer.from(h.body), target, 5_000), h.key).toMatchObject({ kind: 'delivered' });
    }
    const events = await waitFor('the hooks in the history', () => {
      const evs = [...readLogs(daemon.historyDir).values()].flat().filter((e) => e.session === 'shim-net-exchange');
      return evs.length >= hooks.length ? evs : undefined;
    });
    expect(events.map((e) => e.type)).toEqual(hooks.map((h) => h.key.split('|')[0]));
    const o = await deliver(Buffer.from(hooks[0]!.body), { url: new URL(daemon.hookUrl), token: undefined }, 5_000);
    expect([o, shouldSpool(o)]).toEqual([{ kind: 'refused', status: 401 }, false]);
  });
});
