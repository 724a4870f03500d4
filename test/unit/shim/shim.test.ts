import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../support/paths.js';
import { runShim, tempDir } from '../../support/processes.js';

/** A real HTTP peer on loopback whose behaviour each test picks. */
let mode: 'garbage' | 'array' | 'error' | 'hang' | 'context' | 'echo' = 'echo';
let server: Server;
let url = '';
const held: import('node:http').ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (mode === 'hang') return void held.push(res);
      if (mode === 'garbage') return void res.end('not json at all');
      if (mode === 'array') return void res.end('[1,2]');
      if (mode === 'error') return void res.writeHead(500).end('{"error":"x"}');
      if (mode === 'context') return void res.end('{"context":"hello"}\n');
      res.end(JSON.stringify({ got: Buffer.concat(chunks).length }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/hook`;
});
afterAll(async () => {
  for (const r of held) r.destroy();
  await new Promise((r) => server.close(r));
});

const env = () => ({ AEP_HOOK_URL: url, AEP_SHIM_TIMEOUT_MS: '400' });

describe('the shim fails open and prints exactly one JSON object', () => {
  it('observe-only: whatever answers on the port (a context injection, a block), Hermes gets {}', async () => {
    mode = 'context';
    const r = await runShim('{"hook_event_name":"pre_llm_call"}', env());
    expect([r.code, r.stdout]).toEqual([0, '{}']);
  });

  it('with the operator gate on, a reply that is one JSON object is passed through', async () => {
    mode = 'context';
    const r = await runShim('{"hook_event_name":"pre_llm_call"}', { ...env(), AEP_HERMES_CONTROL: '1' });
    expect([r.code, r.stdout]).toEqual([0, '{"context":"hello"}']);
  });

  it('forwards the whole stdin, byte for byte (5 MB)', async () => {
    mode = 'echo';
    const body = JSON.stringify({ hook_event_name: 'post_tool_call', extra: { result: 'z'.repeat(5 * 1024 * 1024) } });
    const r = await runShim(body, { ...env(), AEP_HERMES_CONTROL: '1' });
    expect(JSON.parse(r.stdout)).toEqual({ got: Buffer.byteLength(body) });
  });

  it.each(['localhost:8393/hook', 'https://127.0.0.1:9/hook', 'file:///etc/passwd', 'not a url'])('an unusable AEP_HOOK_URL (%s) → {} at once, exit 0', async (u) => {
    const r = await runShim('{"hook_event_name":"x"}', { AEP_HOOK_URL: u, AEP_SHIM_TIMEOUT_MS: '60000' });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '{}', '']);
  });

  it.each(['garbage', 'array', 'error'] as const)('daemon answering %s → {} (gate on or off)', async (m) => {
    mode = m;
    const r = await runShim('{"hook_event_name":"x"}', { ...env(), AEP_HERMES_CONTROL: '1' });
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
    const r = await runShim('{"hook_event_name":"x"}', { ...env(), AEP_HERMES_CONTROL: '1', RECORD_IMPORTS: rec, NODE_OPTIONS: `--require=${preload}` });
    expect([r.code, r.stdout]).toEqual([0, JSON.stringify({ got: 23 })]);
    const loaded = readFileSync(rec, 'utf8').split('\n').filter(Boolean);
    expect(loaded.map((m) => (m.startsWith('node:') ? m : path.relative(ROOT, m))).sort()).toEqual(['dist/src/shim/hook.cjs', 'node:fs', 'node:http']);
  });

  it('`hermes-aep hook` runs the same shim and loads no fastify, zod or OpenTelemetry code', async () => {
    mode = 'context';
    const rec = path.join(tempDir(), 'imports.txt');
    const hook = path.join(ROOT, 'test', 'support', 'record-imports.mjs');
    const r = await runShim('{"hook_event_name":"x"}', { ...env(), AEP_HERMES_CONTROL: '1', RECORD_IMPORTS: rec, NODE_OPTIONS: `--import=${hook}` }, 'cli');
    expect([r.code, r.stdout]).toEqual([0, '{"context":"hello"}']);
    const loaded = readFileSync(rec, 'utf8').split('\n').filter(Boolean);
    expect(loaded.filter((u) => /node_modules|fastify|zod|opentelemetry/.test(u))).toEqual([]);
    expect(loaded.filter((u) => u.startsWith('file:')).map((u) => path.basename(u)).sort()).toEqual(['cli.js', 'hook.cjs']);
  });
});
