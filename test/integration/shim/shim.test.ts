import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../support/paths.js';
import { runShim, tempDir } from '../../support/processes.js';

/** A real HTTP peer on loopback whose behaviour each test picks. */
let mode: 'garbage' | 'array' | 'error' | 'hang' | 'context' | 'echo' | 'whoami' = 'echo';
let server: Server;
let url = '';
const held: import('node:http').ServerResponse[] = [];

/** The same peer on a Unix socket (the shim's default transport). */
let unixServer: Server;
const stateDir = path.join(tempDir(), 'state');
const socketPath = path.join(stateDir, 'hook.sock');
const TOKEN = 'ab'.repeat(32);

// what a peer saw rides back as a steering reply (the one reply a pre_llm_call may carry to Hermes, under AEP_INSTRUCT)
const probe = (seen: unknown) => JSON.stringify({ context: JSON.stringify(seen) });
const probed = (stdout: string) => (stdout === '{}' ? {} : (JSON.parse((JSON.parse(stdout) as { context: string }).context) as Record<string, unknown>));
const LLM = '{"hook_event_name":"pre_llm_call"}';

beforeAll(async () => {
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(path.join(stateDir, 'hook-token'), `${TOKEN}\n`, { mode: 0o600 });
  unixServer = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end(probe({ via: 'unix', path: req.url, host: req.headers.host, auth: req.headers.authorization ?? null })));
  });
  await new Promise<void>((r) => unixServer.listen(socketPath, r));
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (mode === 'hang') return void held.push(res);
      if (mode === 'garbage') return void res.end('not json at all');
      if (mode === 'array') return void res.end('[1,2]');
      if (mode === 'error') return void res.writeHead(500).end('{"error":"x"}');
      if (mode === 'context') return void res.end('{"context":"hello"}\n');
      if (mode === 'whoami') return void res.end(probe({ via: 'tcp', path: req.url, auth: req.headers.authorization ?? null }));
      res.end(probe({ got: Buffer.concat(chunks).length }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/hook`;
});
afterAll(async () => {
  for (const r of held) r.destroy();
  await new Promise((r) => server.close(r));
  await new Promise((r) => unixServer.close(r));
});

const env = () => ({ AEP_HOOK_URL: url, AEP_SHIM_TIMEOUT_MS: '400', AEP_HERMES_CONTROL: '', AEP_INSTRUCT: '' });

describe('the shim fails open and prints exactly one JSON object', () => {
  it('observe-only: whatever answers on the port (a context injection, a block), Hermes gets {}', async () => {
    mode = 'context';
    const r = await runShim('{"hook_event_name":"pre_llm_call"}', env());
    expect([r.code, r.stdout]).toEqual([0, '{}']);
  });

  it('with the steering gate on, a pre_llm_call context reply is passed through; the operator gate alone does not let it through', async () => {
    mode = 'context';
    const r = await runShim(LLM, { ...env(), AEP_INSTRUCT: '1' });
    expect([r.code, r.stdout]).toEqual([0, '{"context":"hello"}']);
    const c = await runShim(LLM, { ...env(), AEP_HERMES_CONTROL: '1', AEP_INSTRUCT: '' });
    expect([c.code, c.stdout]).toEqual([0, '{}']);
  });

  it('forwards the whole stdin, byte for byte (5 MB)', async () => {
    mode = 'echo';
    const body = JSON.stringify({ hook_event_name: 'pre_llm_call', extra: { conversation_history: 'z'.repeat(5 * 1024 * 1024) } });
    const r = await runShim(body, { ...env(), AEP_INSTRUCT: '1' });
    expect(probed(r.stdout)).toEqual({ got: Buffer.byteLength(body) });
  });

  it.each(['localhost:8393/hook', 'https://127.0.0.1:9/hook', 'file:///etc/passwd', 'not a url'])(
    'an unusable AEP_HOOK_URL (%s) → {} at once, exit 0',
    async (u) => {
      const r = await runShim('{"hook_event_name":"x"}', { AEP_HOOK_URL: u, AEP_SHIM_TIMEOUT_MS: '60000' });
      expect([r.code, r.stdout, r.stderr]).toEqual([0, '{}', '']);
    },
  );

  it.each(['garbage', 'array', 'error'] as const)('daemon answering %s → {} (gates on or off)', async (m) => {
    mode = m;
    const r = await runShim(LLM, { ...env(), AEP_HERMES_CONTROL: '1', AEP_INSTRUCT: '1' });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '{}', '']);
  });

  it('a daemon that never answers → {} once the shim timeout passes', async () => {
    mode = 'hang';
    const r = await runShim('{"hook_event_name":"x"}', env());
    expect([r.code, r.stdout]).toEqual([0, '{}']);
  });

  it('no daemon at all (connection refused) → {}', async () => {
    const r = await runShim('{"hook_event_name":"x"}', { AEP_HOOK_URL: 'http://127.0.0.1:9/hook' });
    expect([r.code, r.stdout]).toEqual([0, '{}']);
  });

  it('empty stdin, and an unparseable target URL → {}', async () => {
    expect((await runShim('', env())).stdout).toBe('{}');
    expect((await runShim('{}', { AEP_HOOK_URL: 'not a url' })).stdout).toBe('{}');
  });

  it('the installed launcher loads one file and two Node built-ins, nothing else', async () => {
    mode = 'echo';
    const rec = path.join(tempDir(), 'requires.txt');
    const preload = path.join(ROOT, 'test', 'support', 'record-requires.cjs');
    const r = await runShim(LLM, { ...env(), AEP_HERMES_CONTROL: '1', AEP_INSTRUCT: '1', RECORD_IMPORTS: rec, NODE_OPTIONS: `--require=${preload}` });
    expect([r.code, probed(r.stdout)]).toEqual([0, { got: LLM.length }]);
    const loaded = readFileSync(rec, 'utf8').split('\n').filter(Boolean);
    expect(loaded.map((m) => (m.startsWith('node:') ? m : path.relative(ROOT, m))).sort()).toEqual(['dist/src/shim/hook.cjs', 'node:fs', 'node:net']);
  });

  it('`hermes-aep hook` runs the same shim and loads no fastify, zod or OpenTelemetry code', async () => {
    mode = 'context';
    const rec = path.join(tempDir(), 'imports.txt');
    const hook = path.join(ROOT, 'test', 'support', 'record-imports.mjs');
    const r = await runShim(LLM, { ...env(), AEP_INSTRUCT: '1', RECORD_IMPORTS: rec, NODE_OPTIONS: `--import=${hook}` }, 'cli');
    expect([r.code, r.stdout]).toEqual([0, '{"context":"hello"}']);
    const loaded = readFileSync(rec, 'utf8').split('\n').filter(Boolean);
    expect(loaded.filter((u) => /node_modules|fastify|zod|opentelemetry/.test(u))).toEqual([]);
    expect(
      loaded
        .filter((u) => u.startsWith('file:'))
        .map((u) => path.basename(u))
        .sort(),
    ).toEqual(['cli.js', 'hook.cjs']);
  });
});

describe('where the shim sends: argv, then env, then the socket under the default state dir', () => {
  const clean = { AEP_HOOK_URL: '', AEP_SOCKET: '', AEP_STATE_DIR: '', AEP_TOKEN_FILE: '', AEP_HOST: '', AEP_PORT: '', AEP_INSTRUCT: '1' };
  const shim = async (env: Record<string, string>, args: string[] = []) => {
    mode = 'whoami';
    const r = await runShim(LLM, { ...clean, ...env }, 'shim', args);
    expect(r.code).toBe(0);
    return probed(r.stdout);
  };

  it('no settings at all: the socket under ~/.aep/state/hermes-aep, and no token over the socket', async () => {
    const home = tempDir();
    const dir = path.join(home, '.aep', 'state', 'hermes-aep');
    mkdirSync(dir, { recursive: true });
    const peer = createServer((req, res) => res.end(probe({ via: 'default', auth: req.headers.authorization ?? null })));
    await new Promise<void>((r) => peer.listen(path.join(dir, 'hook.sock'), r));
    writeFileSync(path.join(dir, 'hook-token'), TOKEN);
    try {
      expect(await shim({ HOME: home })).toEqual({ via: 'default', auth: null });
    } finally {
      await new Promise((r) => peer.close(r));
    }
  });

  it('--socket, --state-dir and AEP_SOCKET / AEP_STATE_DIR reach the socket with Host localhost and no token', async () => {
    const expected = { via: 'unix', path: '/hook', host: 'localhost', auth: null };
    expect(await shim({}, ['--socket', socketPath])).toEqual(expected);
    expect(await shim({}, [`--socket=${socketPath}`])).toEqual(expected);
    expect(await shim({}, ['--state-dir', stateDir])).toEqual(expected);
    expect(await shim({ AEP_SOCKET: socketPath })).toEqual(expected);
    expect(await shim({ AEP_STATE_DIR: stateDir })).toEqual(expected);
  });

  it('--url and AEP_HOOK_URL go over TCP with the token from the state dir (or AEP_TOKEN_FILE)', async () => {
    const expected = { via: 'tcp', path: '/hook', auth: `Bearer ${TOKEN}` };
    expect(await shim({}, ['--url', url, '--state-dir', stateDir])).toEqual(expected);
    expect(await shim({ AEP_HOOK_URL: url, AEP_STATE_DIR: stateDir })).toEqual(expected);
    expect(await shim({ AEP_HOOK_URL: url, AEP_TOKEN_FILE: path.join(stateDir, 'hook-token') })).toEqual(expected);
    // the legacy pair still builds a URL
    const port = new URL(url).port;
    expect(await shim({ AEP_PORT: port, AEP_HOST: '0.0.0.0', AEP_STATE_DIR: stateDir })).toEqual(expected);
    // no token file, or one that is not a token: sent without (the daemon refuses it 401)
    expect(await shim({ AEP_HOOK_URL: url, AEP_STATE_DIR: tempDir() })).toEqual({ ...expected, auth: null });
    expect(await shim({ AEP_HOOK_URL: url, AEP_TOKEN_FILE: path.join(ROOT, 'package.json') })).toEqual({ ...expected, auth: null });
  });

  it('argv wins over env; of --socket and --url the later wins; AEP_SOCKET=off alone means nowhere ({})', async () => {
    expect((await shim({ AEP_HOOK_URL: url }, ['--socket', socketPath])).via).toBe('unix');
    expect((await shim({ AEP_SOCKET: socketPath }, ['--url', url])).via).toBe('tcp');
    expect((await shim({}, ['--url', url, '--socket', socketPath])).via).toBe('unix');
    expect((await shim({}, ['--socket', socketPath, '--url', url])).via).toBe('tcp');
    expect((await shim({ AEP_SOCKET: socketPath, AEP_HOOK_URL: url })).via).toBe('unix');
    expect(await shim({ AEP_SOCKET: 'off' })).toEqual({});
  });

  // "at once" without a clock: the deadline (AEP_SHIM_TIMEOUT_MS) is twice this test's own timeout, so a shim that
  // waited for it fails the test by timing out
  const TEST_MS = 30_000;
  it(
    'a socket nobody listens on, or a path that is no socket → {} at once, exit 0',
    async () => {
      for (const p of [path.join(tempDir(), 'none.sock'), path.join(ROOT, 'package.json')]) {
        const r = await runShim('{"hook_event_name":"x"}', { ...clean, AEP_SHIM_TIMEOUT_MS: String(2 * TEST_MS) }, 'shim', ['--socket', p]);
        expect([r.code, r.stdout, r.stderr]).toEqual([0, '{}', '']);
      }
    },
    TEST_MS,
  );

  it('`hermes-aep hook --socket …` takes the same arguments', async () => {
    mode = 'whoami';
    const r = await runShim(LLM, { ...clean }, 'cli', ['--socket', socketPath]);
    expect(probed(r.stdout)).toMatchObject({ via: 'unix' });
  });
});
