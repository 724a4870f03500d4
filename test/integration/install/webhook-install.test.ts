// `install --transport webhook` (issue 25 item 2, part 2) through the built CLI: our entry in `hooks.outbound` (named
// hermes-aep, the daemon's /webhook URL, the events, the state dir's webhook-secret inline) beside the user's hooks
// and webhooks; the gated hooks keep a shell hook and leave the webhook's events; uninstall gives every byte back;
// the secret never reaches stdout or stderr; a Hermes without outbound webhooks, or a socket-only target, is refused
// (exit 2). And one delivery, signed by python3 with the secret install wrote, reaches the built daemon's history.
import { beforeAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { REGISTERED_HOOKS } from '../../../src/hermes/envelope.js';
import { isOurCommand } from '../../../src/install/hermes-config.js';
import { hermesTree, PLUGINS_PY_0_21_3_LAYOUT } from '../../support/hermes-tree.js';
import { pythonDeliveries } from '../../support/hermes-webhook.js';
import { keyedSession } from '../../support/hook-client.js';
import { CLI } from '../../support/paths.js';
import { httpCall, startDaemonProcess, tempDir, waitFor } from '../../support/processes.js';
import { requirePython } from '../../support/python.js';
import { freePort } from '../../support/ports.js';

const run = promisify(execFile);
beforeAll(() => requirePython('yaml'));

const TREE = hermesTree({ init: '__version__ = "0.21.3"\n', plugins: PLUGINS_PY_0_21_3_LAYOUT, outbound: true });
const PORT = 18393;

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function cli(args: readonly string[], env: Record<string, string>): Promise<Outcome> {
  try {
    const r = await run(process.execPath, [CLI, ...args], {
      env: { ...process.env, AEP_SOCKET: '', AEP_HOOK_URL: '', AEP_HERMES_CONTROL: '', AEP_INSTRUCT: '', ...env },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** config.yaml as Hermes reads it: PyYAML's safe_load, as JSON. */
function pyLoad(file: string): Record<string, any> {
  const py = 'import sys, json, yaml\nprint(json.dumps(yaml.safe_load(open(sys.argv[1], encoding="utf-8")), default=str))';
  return JSON.parse(execFileSync('python3', ['-c', py, file], { encoding: 'utf8' })) as Record<string, any>;
}

/** A HERMES_HOME with `config` (undefined: no config.yaml) and a fresh state dir. */
function world(config: string | undefined): { home: string; state: string; file: string; env: Record<string, string> } {
  const home = tempDir();
  const state = path.join(tempDir(), 'state');
  const file = path.join(home, 'config.yaml');
  if (config !== undefined) writeFileSync(file, config, { mode: 0o600 });
  return { home, state, file, env: { HERMES_HOME: home, AEP_STATE_DIR: state, AEP_PORT: String(PORT) } };
}

const webhookArgs = (...more: string[]) => ['install', '--transport', 'webhook', '--hermes', TREE, ...more];

const USER_OUTBOUND_BLOCK = { name: 'audit', url: 'https://audit.example/h', events: ['on_session_end'], secret_env: 'AUDIT_SECRET' };

const SHAPES: readonly (readonly [string, string | undefined, readonly Record<string, unknown>[]])[] = [
  ['no config.yaml', undefined, []],
  ['no hooks key', '# my settings\nmodel:\n  provider: custom   # keep me\n  mode: 0755\n', []],
  ['hooks: {}', 'model: x\nhooks: {}   # none yet\n', []],
  [
    'hooks with shell entries',
    'hooks:\n  pre_tool_call:\n    - command: /usr/local/bin/my-guard\n      matcher: terminal\n  on_session_end:\n    - command: /bin/true\nx: 1\n',
    [],
  ],
  [
    'hooks.outbound of the user in block style, with comments',
    '# top\nhooks:\n  # my webhooks\n  outbound:\n    - name: audit   # the audit sink\n      url: https://audit.example/h\n      events: [on_session_end]\n      secret_env: AUDIT_SECRET\n  post_tool_call:\n    - command: /bin/log-it\n# after\nother: true\n',
    [USER_OUTBOUND_BLOCK],
  ],
  [
    'hooks.outbound of the user in flow style',
    'hooks:\n  outbound: [{name: audit, url: "https://audit.example/h", events: [on_session_end], secret_env: AUDIT_SECRET}]\n',
    [USER_OUTBOUND_BLOCK],
  ],
  ['hooks.outbound empty flow', 'hooks:\n  outbound: []\n', []],
  ['hooks.outbound null', 'hooks:\n  outbound:\n  on_session_start:\n    - command: /bin/true\n', []],
  [
    'CRLF, no final newline, an outbound list indented at 4',
    'model:\r\n    provider: x\r\nhooks:\r\n    outbound:\r\n        -   name: audit\r\n            url: https://audit.example/h\r\n            events: [on_session_end]\r\n            secret_env: AUDIT_SECRET',
    [USER_OUTBOUND_BLOCK],
  ],
];

const GATE_SETS: readonly (readonly string[])[] = [[], ['--control'], ['--instruct'], ['--control', '--instruct']];

function expectedEvents(gates: readonly string[], modelCalls = true): { webhook: string[]; shell: string[] } {
  const gated = new Set([...(gates.includes('--control') ? ['pre_tool_call'] : []), ...(gates.includes('--instruct') ? ['pre_llm_call'] : [])]);
  const all = REGISTERED_HOOKS.filter((h) => modelCalls || h !== 'post_api_request');
  return { webhook: all.filter((h) => !gated.has(h)), shell: all.filter((h) => gated.has(h)) };
}

/** Our shell hook entries per event in the parsed config. */
function ourShellEvents(cfg: Record<string, any>): string[] {
  const hooks = (cfg?.hooks ?? {}) as Record<string, unknown>;
  return Object.entries(hooks)
    .filter(([k, v]) => k !== 'outbound' && Array.isArray(v) && v.some((i) => isOurCommand((i as { command?: unknown })?.command)))
    .map(([k]) => k)
    .sort();
}

describe('install --transport webhook: config.yaml round trip through the built CLI', () => {
  it.each(SHAPES.map(([name, original, userOutbound], i) => ({ name, original, userOutbound, gates: GATE_SETS[i % GATE_SETS.length]! })))(
    '$name (gates $gates): our entry beside the user’s, PyYAML reads it, the secret is the state dir’s and never printed; twice = once; uninstall gives the bytes back',
    async ({ original, userOutbound, gates }) => {
      const w = world(original);
      const t0 = performance.now();
      const first = await cli(webhookArgs(...gates), w.env);
      const t1 = performance.now();
      expect(first.code, first.stderr).toBe(0);
      const secret = readFileSync(path.join(w.state, 'webhook-secret'), 'utf8').trim();
      expect(secret).toMatch(/^[0-9a-f]{64}$/);
      const text = readFileSync(w.file, 'utf8');
      const cfg = pyLoad(w.file);
      const { webhook, shell } = expectedEvents(gates);
      expect(cfg.hooks.outbound).toEqual([...userOutbound, { name: 'hermes-aep', url: `http://127.0.0.1:${PORT}/webhook`, events: webhook, secret }]);
      expect(ourShellEvents(cfg)).toEqual([...shell].sort());
      for (const ev of shell) expect(cfg.hooks.outbound[userOutbound.length].events).not.toContain(ev);
      expect(text).not.toMatch(/fail_?closed/i);
      for (const out of [first.stdout, first.stderr]) expect(out).not.toContain(secret);
      if (original === undefined) expect(statSync(w.file).mode & 0o777).toBe(0o600);
      else expect(text.includes('\r\n')).toBe(original.includes('\r\n'));

      const again = await cli(webhookArgs(...gates), w.env);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('already hold exactly these entries: nothing to change');
      expect(readFileSync(w.file, 'utf8')).toBe(text);
      expect(again.stdout + again.stderr).not.toContain(secret);

      const off = await cli(['uninstall'], w.env);
      expect(off.code, off.stderr).toBe(0);
      expect(off.stdout + off.stderr).not.toContain(secret);
      if (original === undefined) expect(existsSync(w.file)).toBe(false);
      else expect(readFileSync(w.file, 'utf8')).toBe(original);
      expect(existsSync(path.join(w.home, 'shell-hooks-allowlist.json'))).toBe(false);
      console.log(`install --transport webhook ${gates.join(' ') || '(no gates)'}: ${(t1 - t0).toFixed(0)} ms`);
    },
  );

  it('--dry-run writes nothing and shows the entry with the secret masked; the user’s config content is not printed', async () => {
    const w = world('model:\n  api_key: sk-SECRET-do-not-print\n');
    mkdirSync(w.state, { recursive: true, mode: 0o700 });
    const secret = 'ab'.repeat(32);
    writeFileSync(path.join(w.state, 'webhook-secret'), secret, { mode: 0o600 });
    const dry = await cli(webhookArgs('--dry-run', '--control'), w.env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`secret: "<the 64 hex characters of ${path.join(w.state, 'webhook-secret')}>"`);
    expect(dry.stdout).toContain(`url: "http://127.0.0.1:${PORT}/webhook"`);
    expect(dry.stdout + dry.stderr).not.toContain(secret);
    expect(dry.stdout).not.toContain('sk-SECRET');
    expect(readFileSync(w.file, 'utf8')).toBe('model:\n  api_key: sk-SECRET-do-not-print\n');
    expect(existsSync(path.join(w.state, 'shim'))).toBe(false);
    // a dry run that would create the secret creates nothing
    const fresh = world(undefined);
    const dry2 = await cli(webhookArgs('--dry-run'), fresh.env);
    expect(dry2.code, dry2.stderr).toBe(0);
    expect(dry2.stdout).toContain('would be created');
    expect(existsSync(fresh.state)).toBe(false);
    expect(existsSync(fresh.file)).toBe(false);
  });

  it('the secret written is the one the state dir already holds (the daemon made it first); --url gives the port; --no-model-calls leaves post_api_request out', async () => {
    const w = world('a: 1\n');
    mkdirSync(w.state, { recursive: true, mode: 0o700 });
    const secret = 'cd'.repeat(32);
    writeFileSync(path.join(w.state, 'webhook-secret'), `${secret}\n`, { mode: 0o600 });
    const r = await cli(webhookArgs('--url', 'http://127.0.0.1:9555', '--no-model-calls'), { ...w.env, AEP_PORT: '' });
    expect(r.code, r.stderr).toBe(0);
    const entry = pyLoad(w.file).hooks.outbound[0];
    expect(entry).toEqual({ name: 'hermes-aep', url: 'http://127.0.0.1:9555/webhook', events: expectedEvents([], false).webhook, secret });
    expect(r.stdout).not.toContain(secret);
    // a --url naming /webhook itself is the same place
    const again = await cli(webhookArgs('--url', 'http://127.0.0.1:9555/webhook', '--no-model-calls'), { ...w.env, AEP_PORT: '' });
    expect(again.stdout).toContain('nothing to change');
  });

  it('switching transports: shell → webhook keeps only the gated shell hooks, webhook → shell and → plugin take our outbound entry out; uninstall gives the bytes back', async () => {
    const original = 'hooks:\n  outbound:\n    - name: audit\n      url: https://audit.example/h\n      events: [on_session_end]\n';
    const w = world(original);
    expect((await cli(['install'], w.env)).code).toBe(0);
    expect(ourShellEvents(pyLoad(w.file))).toEqual([...REGISTERED_HOOKS].sort());
    expect((await cli(webhookArgs('--instruct'), w.env)).code).toBe(0);
    let cfg = pyLoad(w.file);
    expect(ourShellEvents(cfg)).toEqual(['pre_llm_call']);
    expect(cfg.hooks.outbound.map((o: { name: string }) => o.name)).toEqual(['audit', 'hermes-aep']);
    const allow = JSON.parse(readFileSync(path.join(w.home, 'shell-hooks-allowlist.json'), 'utf8')) as { approvals: { event: string }[] };
    expect(allow.approvals.map((a) => a.event)).toEqual(['pre_llm_call']);
    const shellAgain = await cli(['install'], w.env);
    expect(shellAgain.code, shellAgain.stderr).toBe(0);
    cfg = pyLoad(w.file);
    expect(cfg.hooks.outbound.map((o: { name: string }) => o.name)).toEqual(['audit']);
    expect(ourShellEvents(cfg)).toEqual([...REGISTERED_HOOKS].sort());
    expect((await cli(webhookArgs(), w.env)).code).toBe(0);
    expect(ourShellEvents(pyLoad(w.file))).toEqual([]);
    expect(existsSync(path.join(w.home, 'shell-hooks-allowlist.json'))).toBe(false);
    expect((await cli(['install', '--transport', 'plugin'], w.env)).code).toBe(0);
    cfg = pyLoad(w.file);
    expect(cfg.hooks.outbound.map((o: { name: string }) => o.name)).toEqual(['audit']);
    expect(cfg.plugins.enabled).toEqual(['hermes-aep']);
    expect((await cli(['uninstall'], w.env)).code).toBe(0);
    expect(readFileSync(w.file, 'utf8')).toBe(original);
  });
});

describe('install --transport webhook refuses, exit 2, writing nothing', () => {
  it('a Hermes without outbound webhooks (no agent/outbound_webhooks.py), or none found', async () => {
    const old = hermesTree({ init: '__version__ = "0.18.2"\n', plugins: PLUGINS_PY_0_21_3_LAYOUT });
    const w = world('a: 1\n');
    const r = await cli(['install', '--transport', 'webhook', '--hermes', old], w.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/has no outbound webhooks \(no agent\/outbound_webhooks\.py.*--transport shell/);
    const none = await cli(['install', '--transport', 'webhook', '--hermes', path.join(tempDir(), 'missing')], w.env);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/needs a Hermes with outbound webhooks: --hermes .* does not exist/);
    expect(readFileSync(w.file, 'utf8')).toBe('a: 1\n');
    expect(existsSync(w.state)).toBe(false);
  });

  it('a socket-only target: no AEP_PORT and no --url, or --socket', async () => {
    const w = world('a: 1\n');
    const r = await cli(webhookArgs(), { ...w.env, AEP_PORT: '' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/needs the daemon on TCP .*give --url http:\/\/127\.0\.0\.1:PORT, or set AEP_PORT/);
    const s = await cli(webhookArgs('--socket', path.join(w.state, 'hook.sock')), w.env);
    expect(s.code).toBe(2);
    expect(s.stderr).toMatch(/needs the daemon on TCP.*not --socket/);
    const odd = await cli(webhookArgs('--url', 'http://127.0.0.1:9555/elsewhere'), w.env);
    expect(odd.code).toBe(2);
    expect(odd.stderr).toMatch(/must be http:\/\/HOST:PORT/);
    expect(readFileSync(w.file, 'utf8')).toBe('a: 1\n');
    expect(existsSync(w.state)).toBe(false);
  });
});

describe('install --transport webhook, then the built daemon', () => {
  it('a delivery signed with the secret install wrote into config.yaml, posted to the url it wrote, reaches the history', async () => {
    const port = await freePort();
    const w = world('model: x\n');
    const r = await cli(webhookArgs(), { ...w.env, AEP_PORT: String(port) });
    expect(r.code, r.stderr).toBe(0);
    const entry = pyLoad(w.file).hooks.outbound[0] as { url: string; secret: string };
    const daemon = await startDaemonProcess({ AEP_PORT: String(port) }, { historyDir: path.join(tempDir(), 'log'), stateDir: w.state });
    try {
      const deliveries = pythonDeliveries(
        keyedSession('wh-install', 1).map((h) => ({ envelope: JSON.parse(h.body) as Record<string, unknown>, secret: entry.secret })),
      );
      const u = new URL(entry.url);
      const t0 = performance.now();
      for (const d of deliveries) {
        const reply = await httpCall(
          { url: `${u.protocol}//${u.host}` },
          { method: 'POST', path: u.pathname, headers: { host: u.host, ...d.headers }, body: d.body },
        );
        expect([reply.status, reply.body]).toEqual([200, '{}']);
      }
      console.log(`${deliveries.length} deliveries to the installed url accepted in ${(performance.now() - t0).toFixed(1)} ms`);
      const types = await waitFor('the session in the history', () => {
        const dir = daemon.historyDir;
        const files: string[] = [];
        const walk = (d: string) => {
          for (const n of existsSync(d) ? readdirSync(d) : []) {
            const p = path.join(d, n);
            if (statSync(p).isDirectory()) walk(p);
            else if (n.endsWith('.jsonl')) files.push(p);
          }
        };
        walk(dir);
        const events = files.flatMap((f) =>
          readFileSync(f, 'utf8')
            .split('\n')
            .filter((l) => l.includes('wh-install'))
            .map((l) => (JSON.parse(l) as { type: string }).type),
        );
        return events.includes('session.ended') ? events : undefined;
      });
      expect(types[0]).toBe('session.started');
      expect(types).toContain('tool.completed');
      expect(((await daemon.health()).transport.webhook as Record<string, number>).accepted).toBe(deliveries.length);
      expect(daemon.stderr()).not.toContain(entry.secret);
    } finally {
      await daemon.stop();
    }
  });
});
