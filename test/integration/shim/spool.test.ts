import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import path from 'node:path';
import { ROOT } from '../../support/paths.js';
import { runShim, tempDir } from '../../support/processes.js';

/** A loopback peer whose answer each test picks. */
let status = 200;
let received = 0;
let server: Server;
let url = '';
/** accepts connections and never reads them: a body larger than the socket buffers can never be fully sent */
let deaf: TcpServer;
let deafUrl = '';
const deafSockets: Socket[] = [];
/** reads every request whole and never answers */
let mute: Server;
let muteUrl = '';
/** reads every request whole, then drops the connection (a daemon killed after reading) */
let reset: Server;
let resetUrl = '';
const held: import('node:http').ServerResponse[] = [];

const port = (s: Server | TcpServer) => (s.address() as { port: number }).port;
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? '{}' : '{"error":"x"}');
    });
  });
  deaf = createTcpServer({ pauseOnConnect: true }, (s) => deafSockets.push(s));
  mute = createServer((req, res) => {
    req.resume();
    req.on('end', () => held.push(res));
  });
  reset = createServer((req) => {
    req.resume();
    req.on('end', () => req.socket.destroy());
  });
  await Promise.all([server, deaf, mute, reset].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
  resetUrl = `http://127.0.0.1:${port(reset)}/hook`;
  url = `http://127.0.0.1:${port(server)}/hook`;
  deafUrl = `http://127.0.0.1:${port(deaf)}/hook`;
  muteUrl = `http://127.0.0.1:${port(mute)}/hook`;
});
afterAll(async () => {
  for (const s of deafSockets) s.destroy();
  for (const r of held) r.destroy();
  await Promise.all([server, deaf, mute, reset].map((s) => new Promise((r) => s.close(r))));
});

const REFUSED = 'http://127.0.0.1:9/hook';
const ENVELOPE = '{"hook_event_name":"pre_tool_call","session_id":"s1","extra":{"tool_call_id":"c1"}}';
const KEY = /^\d{15}-\d{20}-\d+-[a-z0-9]+\.hook$/;

const hooks = (stateDir: string) => {
  try {
    return readdirSync(path.join(stateDir, 'spool'))
      .filter((f) => f.endsWith('.hook'))
      .sort();
  } catch {
    return [];
  }
};
const size = (f: string) => (existsSync(f) ? statSync(f).size : 0);
const dropped = (stateDir: string) => size(path.join(stateDir, 'spool', 'dropped'));
const read = (stateDir: string, f: string) => {
  const buf = readFileSync(path.join(stateDir, 'spool', f));
  const nl = buf.indexOf(10);
  return { header: JSON.parse(buf.subarray(0, nl).toString('utf8')) as Record<string, unknown>, body: buf.subarray(nl + 1) };
};

describe('the shim spools a hook the daemon provably did not take', () => {
  it('connection refused: one whole file, header with the arrival time, then the envelope byte for byte; 0600 in 0700', async () => {
    const state = path.join(tempDir(), 'state');
    const t0 = Date.now();
    const r = await runShim(ENVELOPE, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: state });
    const t1 = Date.now();
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '{}', '']);
    const [f, ...more] = hooks(state);
    expect(more).toEqual([]);
    expect(f).toMatch(KEY);
    const { header, body } = read(state, f!);
    expect(body.toString('utf8')).toBe(ENVELOPE);
    expect(header).toEqual({
      spool: 1,
      arrival: new Date(header.arrival_ms as number).toISOString(),
      arrival_ms: header.arrival_ms,
      bytes: Buffer.byteLength(ENVELOPE),
    });
    expect(header.arrival_ms).toBeGreaterThanOrEqual(t0);
    expect(header.arrival_ms).toBeLessThanOrEqual(t1);
    // the name starts with the zero-padded arrival ms: lexical order is arrival order
    expect(Number(f!.slice(0, 15))).toBe(header.arrival_ms);
    expect(statSync(path.join(state, 'spool')).mode & 0o777).toBe(0o700);
    expect(statSync(state).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(state, 'spool', f!)).mode & 0o777).toBe(0o600);
    // no temp file left behind; the ledgers count one file and its KiB
    expect(readdirSync(path.join(state, 'spool')).filter((x) => x.endsWith('.tmp'))).toEqual([]);
    expect(size(path.join(state, 'spool', 'in.files'))).toBe(1);
    expect(size(path.join(state, 'spool', 'in.kib'))).toBe(1);
  });

  it('successive hooks sort in firing order', async () => {
    const state = path.join(tempDir(), 'state');
    const bodies = [0, 1, 2, 3].map((i) => ENVELOPE.replace('c1', `c${i}`));
    for (const b of bodies) await runShim(b, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: state });
    expect(hooks(state).map((f) => read(state, f).body.toString('utf8'))).toEqual(bodies);
  });

  it.each([503, 500, 502])('the daemon answers %d (starting, draining its spool, closing, failing): spooled', async (code) => {
    status = code;
    const state = path.join(tempDir(), 'state');
    const r = await runShim(ENVELOPE, { AEP_HOOK_URL: url, AEP_STATE_DIR: state, AEP_HERMES_CONTROL: '1' });
    expect([r.code, r.stdout]).toEqual([0, '{}']);
    expect(hooks(state)).toHaveLength(1);
  });

  it.each([200, 400, 413, 404])('the daemon answers %d: taken or refused for good, never spooled; the spool is not even touched', async (code) => {
    status = code;
    const state = path.join(tempDir(), 'state');
    const r = await runShim(ENVELOPE, { AEP_HOOK_URL: url, AEP_STATE_DIR: state });
    expect([r.code, r.stdout]).toEqual([0, '{}']);
    expect(existsSync(state)).toBe(false);
  });

  it('a timeout AFTER the whole request was sent is ambiguous (the daemon may have it): not spooled, so never twice', async () => {
    const state = path.join(tempDir(), 'state');
    const r = await runShim(ENVELOPE, { AEP_HOOK_URL: muteUrl, AEP_STATE_DIR: state, AEP_SHIM_TIMEOUT_MS: '300' });
    expect([r.code, r.stdout]).toEqual([0, '{}']);
    expect(existsSync(state)).toBe(false);
  });

  it('a connection dropped AFTER the whole request was sent (a daemon killed mid-hook): not spooled either', async () => {
    const state = path.join(tempDir(), 'state');
    const r = await runShim(ENVELOPE, { AEP_HOOK_URL: resetUrl, AEP_STATE_DIR: state });
    expect([r.code, r.stdout]).toEqual([0, '{}']);
    expect(existsSync(state)).toBe(false);
  });

  it('a timeout BEFORE the request was fully sent (the daemon never had it whole): spooled, byte for byte', async () => {
    const state = path.join(tempDir(), 'state');
    // larger than any loopback socket buffer pair, so the write cannot complete against a peer that never reads
    const body = JSON.stringify({ hook_event_name: 'pre_llm_call', session_id: 's1', extra: { conversation_history: ['y'.repeat(48 * 1024 * 1024)] } });
    const r = await runShim(body, { AEP_HOOK_URL: deafUrl, AEP_STATE_DIR: state, AEP_SHIM_TIMEOUT_MS: '1500' });
    expect([r.code, r.stdout]).toEqual([0, '{}']);
    const [f] = hooks(state);
    const { body: spooled } = read(state, f!);
    expect(spooled.length).toBe(Buffer.byteLength(body));
    expect(createHash('sha256').update(spooled).digest('hex')).toBe(createHash('sha256').update(body).digest('hex'));
  });

  it('a 57 MB pre_llm_call is spooled whole (one write from the buffer stdin was read into)', async () => {
    const state = path.join(tempDir(), 'state');
    const body = Buffer.from(
      JSON.stringify({ hook_event_name: 'pre_llm_call', session_id: 's1', extra: { conversation_history: ['z'.repeat(57 * 1024 * 1024)] } }),
    );
    const r = await runShim(body, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: state });
    expect(r.stdout).toBe('{}');
    const [f] = hooks(state);
    const { header, body: spooled } = read(state, f!);
    expect(header.bytes).toBe(body.length);
    expect(spooled.equals(body)).toBe(true);
    expect(size(path.join(state, 'spool', 'in.kib'))).toBe(Math.ceil(statSync(path.join(state, 'spool', f!)).size / 1024));
  });

  it('the state dir: argv --state-dir, then AEP_STATE_DIR, then ~/.aep/state/hermes-aep', async () => {
    const home = tempDir();
    const env = path.join(tempDir(), 'env-state');
    const argv = path.join(tempDir(), 'argv-state');
    await runShim(ENVELOPE, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: env, HOME: home }, 'shim', ['--state-dir', argv]);
    await runShim(ENVELOPE, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: env, HOME: home }, 'shim', [`--state-dir=${argv}`]);
    await runShim(ENVELOPE, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: env, HOME: home }, 'cli', ['--state-dir', argv]);
    await runShim(ENVELOPE, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: env, HOME: home });
    await runShim(ENVELOPE, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: '', HOME: home });
    expect([hooks(argv).length, hooks(env).length, hooks(path.join(home, '.aep', 'state', 'hermes-aep')).length]).toEqual([3, 1, 1]);
  });

  it('the cap: past AEP_SPOOL_MAX_FILES or AEP_SPOOL_MAX_BYTES a hook is dropped, one byte appended to `dropped`; 0 turns the spool off', async () => {
    const state = path.join(tempDir(), 'state');
    for (let i = 0; i < 4; i++) await runShim(ENVELOPE, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: state, AEP_SPOOL_MAX_FILES: '2' });
    expect([hooks(state).length, dropped(state)]).toEqual([2, 2]);
    // bytes: the ledger counts 2 KiB so far; a 3 KiB cap has room for exactly one more small hook
    await runShim(ENVELOPE, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: state, AEP_SPOOL_MAX_BYTES: '3072' });
    await runShim(ENVELOPE, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: state, AEP_SPOOL_MAX_BYTES: '3072' });
    expect([hooks(state).length, dropped(state)]).toEqual([3, 3]);
    const off = path.join(tempDir(), 'state');
    const r = await runShim(ENVELOPE, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: off, AEP_SPOOL_MAX_FILES: '0' });
    expect(r.stdout).toBe('{}');
    expect([hooks(off).length, dropped(off)]).toEqual([0, 1]);
  });

  it('a hook the daemon already took out of the spool frees its place (the daemon appends to the out ledgers)', async () => {
    const state = path.join(tempDir(), 'state');
    for (let i = 0; i < 2; i++) await runShim(ENVELOPE, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: state, AEP_SPOOL_MAX_FILES: '2' });
    writeFileSync(path.join(state, 'spool', 'out.files'), '.');
    writeFileSync(path.join(state, 'spool', 'out.kib'), '.');
    await runShim(ENVELOPE, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: state, AEP_SPOOL_MAX_FILES: '2' });
    expect([hooks(state).length, dropped(state)]).toEqual([3, 0]);
  });

  it('a spool it cannot write (the state dir is a file): {} at once, exit 0, nothing on stderr', async () => {
    const state = path.join(tempDir(), 'not-a-dir');
    writeFileSync(state, 'x');
    const r = await runShim(ENVELOPE, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: state });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '{}', '']);
  });

  it('spooling loads nothing new: one file, node:fs and node:net', async () => {
    const state = path.join(tempDir(), 'state');
    const rec = path.join(tempDir(), 'requires.txt');
    const preload = path.join(ROOT, 'test', 'support', 'record-requires.cjs');
    const r = await runShim(ENVELOPE, { AEP_HOOK_URL: REFUSED, AEP_STATE_DIR: state, RECORD_IMPORTS: rec, NODE_OPTIONS: `--require=${preload}` });
    expect(r.stdout).toBe('{}');
    expect(hooks(state)).toHaveLength(1);
    const loaded = readFileSync(rec, 'utf8').split('\n').filter(Boolean);
    expect(loaded.map((m) => (m.startsWith('node:') ? m : path.relative(ROOT, m))).sort()).toEqual(['dist/src/shim/hook.cjs', 'node:fs', 'node:net']);
  });

  it('the daemon-up path never touches the spool', async () => {
    status = 200;
    const state = path.join(tempDir(), 'state');
    const before = received;
    await runShim(ENVELOPE, { AEP_HOOK_URL: url, AEP_STATE_DIR: state });
    expect(received).toBe(before + 1);
    expect(existsSync(state)).toBe(false);
  });
});
