// The installer's parts: Hermes's timestamp format, the shim copy, the hook
// token, the target recorded in the command, and the allowlist splice.
import { describe, expect, it } from 'vitest';
import { requirePython } from '../../support/python.js';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pythonIsoUtc, pythonStatFloat } from '../../../src/install/py-time.js';
import { placeShim } from '../../../src/install/shim-copy.js';
import { ensureHookToken } from '../../../src/install/hook-token.js';
import { resolveTarget } from '../../../src/install/shim-target.js';
import { addApprovals, removeApprovals } from '../../../src/install/allowlist.js';
import { REGISTERED_HOOKS } from '../../../src/hermes/envelope.js';
import { SHIM } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';

describe("Hermes's timestamps", () => {
  it('whole seconds print without a fraction, others with six digits', () => {
    expect(pythonIsoUtc(1_780_000_000)).toBe('2026-05-28T20:26:40Z');
    expect(pythonIsoUtc(1_780_000_000.5)).toBe('2026-05-28T20:26:40.500000Z');
  });

  it('match Python to the microsecond for st_mtime floats, rounding included', () => {
    requirePython();
    const samples: [bigint, bigint][] = [
      [1_780_000_000n, 0n],
      [1_780_000_000n, 999_999_999n],
      [1_780_000_000n, 500n],
      [1_780_000_000n, 1_500n],
      [1_780_000_000n, 2_500n],
    ];
    for (let i = 0; i < 200; i++) samples.push([BigInt(1_600_000_000 + Math.floor(Math.random() * 300_000_000)), BigInt(Math.floor(Math.random() * 1e9))]);
    const py =
      'import sys, datetime\nfor line in sys.stdin:\n  s, n = map(int, line.split())\n  print(datetime.datetime.fromtimestamp(s + n * 1e-9, tz=datetime.timezone.utc).isoformat().replace("+00:00", "Z"))';
    const out = execFileSync('python3', ['-c', py], { input: samples.map(([s, n]) => `${s} ${n}`).join('\n') })
      .toString()
      .trim()
      .split('\n');
    expect(samples.map(([s, n]) => pythonIsoUtc(pythonStatFloat(s, n)))).toEqual(out);
  });
});

describe('the shim copy', () => {
  it('a new version gets a new directory; the same bytes are kept; changed bytes are replaced; a dry run writes nothing', async () => {
    const state = tempDir();
    const dry = await placeShim(SHIM, state, '9.9.9', { dryRun: true });
    expect([dry.action, existsSync(dry.path)]).toEqual(['copied', false]);
    const a = await placeShim(SHIM, state, '9.9.9');
    expect(a.path).toBe(path.join(state, 'shim', '9.9.9', 'hook.cjs'));
    expect(a.action).toBe('copied');
    expect(statSync(a.path).mtimeMs % 1000).toBe(0);
    expect((await placeShim(SHIM, state, '9.9.9')).action).toBe('kept');
    const b = await placeShim(SHIM, state, '9.10.0');
    expect(path.dirname(b.path)).not.toBe(path.dirname(a.path));
    expect(readFileSync(a.path)).toEqual(readFileSync(SHIM));
    chmodSync(a.path, 0o600);
    writeFileSync(a.path, '// tampered');
    const c = await placeShim(SHIM, state, '9.9.9');
    expect(c.action).toBe('replaced');
    expect(readFileSync(c.path)).toEqual(readFileSync(SHIM));
    await expect(placeShim(SHIM, state, '../escape')).rejects.toThrow(/cannot name a directory/);
  });
});

describe('the hook token', () => {
  it('concurrent installs create exactly one token, and everyone sees the same one', async () => {
    const state = tempDir();
    const results = await Promise.all(Array.from({ length: 8 }, () => ensureHookToken(state)));
    expect(results.filter((r) => r.action === 'created')).toHaveLength(1);
    expect(readFileSync(path.join(state, 'hook-token'), 'utf8')).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(path.join(state, 'hook-token')).mode & 0o777).toBe(0o600);
  });
});

describe('the recorded target', () => {
  const env = { HOME: '/home/u' };
  it('records only what differs from the shim defaults', () => {
    expect(resolveTarget({ stateDir: '/s' }, env).args).toEqual(['--state-dir', '/s']);
    expect(resolveTarget({ stateDir: '/s', socket: '/s/hook.sock' }, env).args).toEqual(['--state-dir', '/s']);
    expect(resolveTarget({ stateDir: '/s' }, { AEP_PORT: '8393', AEP_HOST: '0.0.0.0' }).args).toEqual([
      '--state-dir',
      '/s',
      '--url',
      'http://127.0.0.1:8393/hook',
    ]);
    expect(resolveTarget({ stateDir: '/s' }, { AEP_PORT: '8393', AEP_HOST: '::' }).args).toEqual(['--state-dir', '/s', '--url', 'http://[::1]:8393/hook']);
    expect(resolveTarget({ stateDir: '/s', url: 'http://127.0.0.1:8393' }, {}).args).toEqual(['--state-dir', '/s', '--url', 'http://127.0.0.1:8393/hook']);
    expect(resolveTarget({ stateDir: '/s' }, { AEP_SOCKET: '/run/aep.sock' }).args).toEqual(['--state-dir', '/s', '--socket', '/run/aep.sock']);
    expect(resolveTarget({ stateDir: '/s' }, { AEP_HOOK_URL: 'http://localhost:9400', AEP_SOCKET: '/x.sock', AEP_PORT: '1' }).args).toEqual([
      '--state-dir',
      '/s',
      '--url',
      'http://localhost:9400/hook',
    ]);
    expect(resolveTarget({ stateDir: '/s' }, { AEP_SOCKET: '/x.sock', AEP_PORT: '1' }).args).toEqual(['--state-dir', '/s', '--socket', '/x.sock']);
    expect(resolveTarget({ stateDir: '/s', url: 'http://127.0.0.1:8393/hook' }, { AEP_SOCKET: '/ignored.sock' }).args).toEqual([
      '--state-dir',
      '/s',
      '--url',
      'http://127.0.0.1:8393/hook',
    ]);
    expect(resolveTarget({}, { AEP_STATE_DIR: '/from/env' }).stateDir).toBe('/from/env');
    expect(resolveTarget({ stateDir: '/opt' }, { AEP_STATE_DIR: '/from/env' }).stateDir).toBe('/opt');
    expect(() => resolveTarget({ stateDir: '/s' }, { AEP_PORT: '0' })).toThrow(/AEP_PORT: a whole number from 1 to 65535/);
    // the daemon refuses a path that is not absolute (`~` is expanded by shells only): so does install, naming it
    expect(() => resolveTarget({}, { AEP_STATE_DIR: '~/state' })).toThrow(/AEP_STATE_DIR: an absolute path/);
    expect(() => resolveTarget({ stateDir: '/s' }, { AEP_SOCKET: 'run/hook.sock' })).toThrow(/AEP_SOCKET: an absolute path/);
    expect(() => resolveTarget({ stateDir: '/s', url: 'https://127.0.0.1/hook' }, {})).toThrow(/http:\/\//);
  });
});

describe('the allowlist splice', () => {
  const CMD = '/usr/bin/node /s/shim/0.1.0/hook.cjs';
  const layouts: [string, string | undefined][] = [
    ['missing', undefined],
    [
      'Hermes layout (indent 2, sorted keys, no final newline)',
      '{\n  "approvals": [\n    {\n      "approved_at": "2026-01-01T00:00:00.123456Z",\n      "command": "/usr/local/bin/guard",\n      "event": "pre_tool_call",\n      "script_mtime_at_approval": null\n    }\n  ]\n}',
    ],
    ['empty list, pretty', '{\n  "approvals": []\n}\n'],
    ['empty list with a space', '{"approvals": [ ]}'],
    ['compact with other keys', '{"approvals":[{"event":"x","command":"/bin/x"}],"zeta":{"k":[1,2]}}\n'],
    ['no approvals key', '{\n  "other": true\n}\n'],
    ['CRLF and a BOM', '\uFEFF{\r\n  "approvals": [\r\n    {"event": "x", "command": "/bin/x"}\r\n  ]\r\n}\r\n'],
  ];
  it.each(layouts)('%s: install twice = once, uninstall gives the bytes back', (name, text) => {
    const once = addApprovals(text, CMD, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z');
    const data = JSON.parse(once.text.replace(/^\uFEFF/, '')) as { approvals: { command: string }[] };
    expect(data.approvals.filter((a) => a.command === CMD)).toHaveLength(REGISTERED_HOOKS.length);
    expect(addApprovals(once.text, CMD, 'later', '2026-01-01T00:00:00Z').changed).toBe(false);
    const back = removeApprovals(once.text);
    if (text === undefined) expect(back.deleteFile).toBe(true);
    else if (name === 'no approvals key') expect(JSON.parse(back.text)).toEqual({ ...JSON.parse(text), approvals: [] });
    else expect(back.text).toBe(text);
  });

  it("a changed script mtime or command refreshes our approvals and keeps everyone else's", () => {
    const start = '{"approvals": [{"event": "x", "command": "/bin/x"}]}';
    const once = addApprovals(start, CMD, 'a', 'm1');
    const again = addApprovals(once.text, CMD, 'b', 'm2');
    expect(again.changed).toBe(true);
    const data = JSON.parse(again.text) as { approvals: { command: string; script_mtime_at_approval?: string }[] };
    expect(data.approvals).toHaveLength(REGISTERED_HOOKS.length + 1);
    expect(data.approvals.filter((a) => a.script_mtime_at_approval === 'm2')).toHaveLength(REGISTERED_HOOKS.length);
    expect(removeApprovals(again.text).text).toBe(start);
  });

  it('refuses what it cannot edit without losing anything', () => {
    expect(() => addApprovals('{"approvals": {}}', CMD, 'a', null)).toThrow(/list/);
    expect(() => addApprovals('[1]', CMD, 'a', null)).toThrow(/object/);
  });
});
