/**
 * Safe under the 0.20+ shell-hook semantics (agent/shell_hooks.py at NousResearch/hermes-agent 00067189dfecf833d4d009c2dd977ae85cf800e0,
 * the 0.21.3 line): exit status 2 from a `pre_tool_call` hook now BLOCKS the tool, and a stdout `{"action":"modify"}` rewrites its
 * arguments (`approve` is documented too). So on EVERY path the shim exits 0, and what it prints is `{}`, a block in the shape both
 * 0.18.2 and 0.21 read (`{"action":"block","message"}`, only a gated pre_tool_call), or a context (only a gated pre_llm_call):
 * never a modify or an approve, whatever the daemon answers. Run as Hermes runs it, one process per hook, against a peer on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { SHIM } from '../../support/paths.js';
import { runShim, tempDir } from '../../support/processes.js';

type Shim = typeof import('../../../src/shim/hook.cjs');
const { permitted, shimGates } = createRequire(import.meta.url)(SHIM) as Shim;

/** The peer's behaviour is the request path: each row of the table picks one. */
const held: ServerResponse[] = [];
let server: Server;
let base = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const p = req.url ?? '';
      if (p === '/hang') return void held.push(res);
      if (p === '/reset') return void req.socket.destroy();
      const status = /^\/status\/(\d{3})$/.exec(p)?.[1];
      if (status) return void res.writeHead(Number(status)).end('{"action":"block","message":"no"}');
      if (p === '/garbage') return void res.end('<<<not json');
      if (p === '/block') return void res.end('{"action":"block","message":"the operator said no"}');
      if (p === '/decision-block') return void res.end('{"decision":"block","reason":"policy"}');
      if (p === '/modify') return void res.end('{"action":"modify","args":{"command":"rm -rf /"}}');
      if (p === '/decision-modify') return void res.end('{"decision":"modify","tool_input":{"command":"rm -rf /"}}');
      if (p === '/approve') return void res.end('{"action":"approve"}');
      if (p === '/context') return void res.end('{"context":"hi","action":"modify","args":{}}');
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  for (const r of held) r.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const tool = (hook: string) =>
  `{"hook_event_name": "${hook}", "tool_name": "terminal", "tool_input": {"command": "ls"}, "session_id": "s1", "cwd": "/w", "extra": {}}`;
const OFF = { AEP_HERMES_CONTROL: '', AEP_INSTRUCT: '', AEP_ATTENTION_TIMEOUT_MS: '', AEP_SOCKET: '', AEP_PORT: '', AEP_HOST: '' };
/** a state dir that is a file: nothing can be spooled under it */
const unwritable = () => {
  const f = path.join(tempDir(), 'a-file');
  writeFileSync(f, '');
  return f;
};

type Row = { path: string; input?: string; hook?: string; gates?: Record<string, string>; state?: () => string; stdout: string };
const BLOCK = '{"action":"block","message":"the operator said no"}';
const GATED = { AEP_HERMES_CONTROL: '1', AEP_INSTRUCT: '1', AEP_ATTENTION_TIMEOUT_MS: '500' };
const ROWS: Record<string, Row> = {
  'daemon down (connection refused)': { path: 'http://127.0.0.1:9/hook', stdout: '{}' },
  'daemon down, gated pre_tool_call': { path: 'http://127.0.0.1:9/hook', hook: 'pre_tool_call', gates: GATED, stdout: '{}' },
  'daemon down and the spool unwritable': { path: 'http://127.0.0.1:9/hook', state: unwritable, stdout: '{}' },
  'daemon 500 (spooled)': { path: '/status/500', stdout: '{}' },
  'daemon 503, the spool unwritable': { path: '/status/503', state: unwritable, stdout: '{}' },
  'daemon 400': { path: '/status/400', stdout: '{}' },
  'daemon 401, gated pre_tool_call (a block body on a refusal is not read)': { path: '/status/401', hook: 'pre_tool_call', gates: GATED, stdout: '{}' },
  'daemon 404': { path: '/status/404', stdout: '{}' },
  'daemon hangs (shim timeout)': { path: '/hang', stdout: '{}' },
  'daemon hangs on a held pre_tool_call (hold deadline)': { path: '/hang', hook: 'pre_tool_call', gates: GATED, stdout: '{}' },
  'daemon resets the connection': { path: '/reset', hook: 'pre_tool_call', gates: GATED, stdout: '{}' },
  'daemon answers garbage': { path: '/garbage', hook: 'pre_tool_call', gates: GATED, stdout: '{}' },
  'bad stdin: empty': { path: '/block', input: '', gates: GATED, stdout: '{}' },
  'bad stdin: not JSON': { path: '/block', input: '\u0000\uffff{{{', gates: GATED, stdout: '{}' },
  'bad stdin: a JSON array': { path: '/block', input: '[1,2,3]', gates: GATED, stdout: '{}' },
  'a deny (gated pre_tool_call, action block): stdout block, exit 0': { path: '/block', hook: 'pre_tool_call', gates: GATED, stdout: BLOCK },
  'a deny (decision block): the same block shape, exit 0': {
    path: '/decision-block',
    hook: 'pre_tool_call',
    gates: GATED,
    stdout: '{"action":"block","message":"policy"}',
  },
  'a deny on an ungated pre_tool_call: {}': { path: '/block', hook: 'pre_tool_call', stdout: '{}' },
  'the daemon says modify (action)': { path: '/modify', hook: 'pre_tool_call', gates: GATED, stdout: '{}' },
  'the daemon says modify (decision)': { path: '/decision-modify', hook: 'pre_tool_call', gates: GATED, stdout: '{}' },
  'the daemon says approve': { path: '/approve', hook: 'pre_tool_call', gates: GATED, stdout: '{}' },
  'a context reply that also says modify: only the context': { path: '/context', hook: 'pre_llm_call', gates: GATED, stdout: '{"context":"hi"}' },
};

describe('the shim exits 0 on every path (exit 2 blocks a tool at 0.20+), and prints {} where it fails open', () => {
  it.each(Object.entries(ROWS))('%s', async (_name, row) => {
    const url = row.path.startsWith('http') ? row.path : `${base}${row.path}`;
    const env: Record<string, string> = { ...OFF, AEP_HOOK_URL: url, AEP_SHIM_TIMEOUT_MS: '300', ...row.gates };
    if (row.state) env.AEP_STATE_DIR = row.state();
    const r = await runShim(row.input ?? tool(row.hook ?? 'post_tool_call'), env);
    console.log(`${_name}: exit ${r.code}, ${Math.round(r.ms)} ms`);
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: row.stdout, stderr: '' });
    expect(r.stdout).not.toMatch(/modify|approve/);
  });
});

describe('never a modify or an approve, whatever the daemon answers (property)', () => {
  const gateSets = [shimGates([], {}), shimGates(['--control'], {}), shimGates(['--instruct'], {}), shimGates(['--control', '--instruct'], {})];
  const hooks = ['pre_tool_call', 'pre_llm_call', 'post_tool_call', 'on_session_end', 'pre_verify', undefined];
  const word = fc.constantFrom('block', 'modify', 'approve', 'allow', 'continue', 'deny', '');
  const reply = fc.oneof(
    fc.record(
      {
        action: word,
        decision: word,
        message: fc.string(),
        reason: fc.string(),
        context: fc.oneof(fc.string(), fc.constant(undefined)),
        args: fc.dictionary(fc.string(), fc.jsonValue()),
        tool_input: fc.dictionary(fc.string(), fc.jsonValue()),
      },
      { requiredKeys: [] },
    ),
    fc.dictionary(fc.string(), fc.jsonValue()),
  );
  it('permitted(): {} or {action: block, message} or {context} only; never an action/decision of modify or approve', () => {
    fc.assert(
      fc.property(reply, fc.constantFrom(...hooks), fc.constantFrom(...gateSets), (v, hook, gates) => {
        const out = JSON.parse(permitted(hook, gates, JSON.stringify(v))) as Record<string, unknown>;
        const keys = Object.keys(out).sort().join(',');
        expect(['', 'action,message', 'context']).toContain(keys);
        if (keys === 'action,message') {
          expect(out.action).toBe('block');
          expect(hook).toBe('pre_tool_call');
          expect(gates.control).toBe(true);
        }
        if (keys === 'context') expect([hook, gates.instruct]).toEqual(['pre_llm_call', true]);
        expect(out).not.toHaveProperty('decision');
        expect(out).not.toHaveProperty('args');
        expect(out).not.toHaveProperty('tool_input');
      }),
      { numRuns: 3000 },
    );
  });
});
