import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { addHooks, removeHooks, shimCommand, isOurCommand } from '../../../src/install/hermes-config.js';
import { addApprovals, removeApprovals } from '../../../src/install/allowlist.js';
import { REGISTERED_HOOKS } from '../../../src/hermes/envelope.js';
import { CLI, readJson } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';
import { pathWithOnlyThisNode } from '../../support/node-path.js';

const run = promisify(execFile);
const USER_CONFIG = `# my settings
model:
  provider: custom   # keep me
hooks:
  pre_tool_call:
    - command: /usr/local/bin/my-guard
      matcher: terminal
hooks_auto_accept: false
`;

describe('installer (pure edits)', () => {
  const cmd = shimCommand('/opt/node dir/bin/node', '/srv/hermes-aep/dist/src/shim/hook.cjs');

  it('quotes for shlex and recognises its own entries', () => {
    expect(cmd).toBe(`'/opt/node dir/bin/node' /srv/hermes-aep/dist/src/shim/hook.cjs`);
    expect(isOurCommand(cmd)).toBe(true);
    expect(isOurCommand('/usr/bin/node /opt/x/dist/src/cli.js hook')).toBe(true);
    expect(isOurCommand('/usr/local/bin/my-guard')).toBe(false);
    expect(isOurCommand('/usr/bin/node /home/u/.aep/state/hermes-aep/shim/0.1.0/hook.cjs')).toBe(true);
    expect(isOurCommand("/usr/bin/node '/s d/shim/0.2.0-rc.1/hook.cjs' --socket /s/h.sock --state-dir '/s d'")).toBe(true);
    expect(isOurCommand('/usr/bin/node /s/shim/0.1.0/hook.cjs --evil x')).toBe(false);
    expect(isOurCommand('/usr/bin/node /opt/other/hook.cjs')).toBe(false);
  });

  it('adds the thirteen events, keeps the user hook, keys and comments; a second run changes nothing', () => {
    const once = addHooks(USER_CONFIG, { command: cmd, timeout: 10 });
    const cfg = parse(once.text);
    expect(Object.keys(cfg.hooks).sort()).toEqual([...REGISTERED_HOOKS].sort());
    expect(cfg.hooks.pre_tool_call).toEqual([
      { command: '/usr/local/bin/my-guard', matcher: 'terminal' },
      { command: cmd, timeout: 10 },
    ]);
    expect(cfg.model).toEqual({ provider: 'custom' });
    expect(once.text).toContain('# keep me');
    expect(addHooks(once.text, { command: cmd, timeout: 10 }).changed).toBe(false);
    const moved = addHooks(once.text, { command: cmd.replace('/srv', '/new'), timeout: 10 });
    expect(parse(moved.text).hooks.pre_tool_call).toHaveLength(2);
    const back = removeHooks(once.text);
    expect(parse(back.text)).toEqual(parse(USER_CONFIG));
  });

  it('refuses a config it cannot edit safely, with a reason', () => {
    expect(() => addHooks('hooks: [1, 2]\n', { command: cmd, timeout: 10 })).toThrow(/hooks: must be a mapping/);
    expect(() => addHooks('a: [\n', { command: cmd, timeout: 10 })).toThrow(/not valid YAML/);
  });

  it('allowlist: approves each event once, keeps foreign entries and keys, removes only ours', () => {
    const start = JSON.stringify({ approvals: [{ event: 'pre_tool_call', command: '/usr/local/bin/my-guard' }], extra_key: 1 });
    const a = addApprovals(start, cmd, '2026-11-29T00:00:00Z', null);
    const data = JSON.parse(a.text);
    expect(data.extra_key).toBe(1);
    expect(data.approvals).toHaveLength(REGISTERED_HOOKS.length + 1);
    expect(addApprovals(a.text, cmd, 'later', null).changed).toBe(false);
    expect(JSON.parse(removeApprovals(a.text).text)).toEqual(JSON.parse(start));
    expect(removeApprovals(a.text).text).toBe(start);
    expect(() => addApprovals('{"approvals": [}', cmd, 'x', null)).toThrow(/not valid JSON/);
  });
});

describe('hermes-aep install / uninstall (the real CLI on a temp HERMES_HOME)', () => {
  it('--dry-run writes nothing; install writes config + allowlist; uninstall restores', async () => {
    const home = tempDir();
    const state = tempDir();
    mkdirSync(home, { recursive: true });
    const cfgFile = path.join(home, 'config.yaml');
    writeFileSync(cfgFile, USER_CONFIG);
    const env = { ...process.env, PATH: pathWithOnlyThisNode(), HERMES_HOME: home, AEP_STATE_DIR: state };
    const registered = shimCommand(process.execPath, path.join(state, 'shim', readJson<{ version: string }>('package.json').version, 'hook.cjs'), [
      '--state-dir',
      state,
    ]);
    writeFileSync(cfgFile, `${USER_CONFIG}custom_providers:\n  - api_key: sk-SECRET-do-not-print\n`);
    const dry = await run(process.execPath, [CLI, 'install', '--dry-run'], { env });
    expect(dry.stdout).toMatch(/hooks: add \(13 events: .*on_session_finalize.*post_api_request/);
    expect(dry.stdout).toContain(registered);
    expect(dry.stdout).not.toContain('sk-SECRET');
    writeFileSync(cfgFile, USER_CONFIG);
    expect(readFileSync(cfgFile, 'utf8')).toBe(USER_CONFIG);
    expect(existsSync(path.join(home, 'shell-hooks-allowlist.json'))).toBe(false);
    await run(process.execPath, [CLI, 'install', '--timeout', '20'], { env });
    const cfg = parse(readFileSync(cfgFile, 'utf8'));
    expect(cfg.hooks.on_session_end).toEqual([{ command: registered, timeout: 20 }]);
    const allow = JSON.parse(readFileSync(path.join(home, 'shell-hooks-allowlist.json'), 'utf8'));
    expect(allow.approvals.map((a: { event: string }) => a.event).sort()).toEqual([...REGISTERED_HOOKS].sort());
    await run(process.execPath, [CLI, 'uninstall'], { env });
    expect(readFileSync(cfgFile, 'utf8')).toBe(USER_CONFIG);
    // install created the allowlist, so uninstall deletes it again
    expect(existsSync(path.join(home, 'shell-hooks-allowlist.json'))).toBe(false);
    await expect(run(process.execPath, [CLI, 'install', '--timeout', '999'], { env })).rejects.toThrow(/between 6 and 300/);
    await expect(run(process.execPath, [CLI, 'install', '--timeout', '2'], { env })).rejects.toThrow(/shim/);
  });

  it('writes through a symlinked config.yaml instead of replacing the link', async () => {
    const home = tempDir();
    const real = path.join(tempDir(), 'dotfiles-config.yaml');
    writeFileSync(real, USER_CONFIG);
    symlinkSync(real, path.join(home, 'config.yaml'));
    await run(process.execPath, [CLI, 'install'], { env: { ...process.env, HERMES_HOME: home, AEP_STATE_DIR: tempDir() } });
    expect(lstatSync(path.join(home, 'config.yaml')).isSymbolicLink()).toBe(true);
    expect(parse(readFileSync(real, 'utf8')).hooks.pre_tool_call).toHaveLength(2);
  });
});

describe('installer keeps every byte outside the hooks block', () => {
  const cmd = shimCommand('/usr/bin/node', '/srv/hermes-aep/dist/src/shim/hook.cjs');
  const TRICKY = `# my settings
model:
  provider: custom   # keep me
  mode: 0755
  big: 1e3
  code: 08
hooks:
  # my guard
  pre_tool_call:
    - command: /usr/local/bin/my-guard
      matcher: terminal
# a comment after the block
hooks_auto_accept: false
dup: 1
dup: 2
`;

  it('values PyYAML reads as YAML 1.1 (0755, 1e3, 08), duplicate keys and comments survive install and uninstall byte for byte', () => {
    const once = addHooks(TRICKY, { command: cmd, timeout: 10 });
    const outside = (t: string) => t.replace(/^hooks:\n(?:(?: {2,}.*|\s*)\n)*/m, '<HOOKS>\n');
    expect(outside(once.text)).toBe(outside(TRICKY));
    expect(once.text).toContain('  # my guard');
    expect(once.text).toContain(`- command: ${cmd}`);
    expect(removeHooks(once.text).text).toBe(TRICKY.replace('hooks:\n  # my guard\n', 'hooks:\n  # my guard\n'));
  });

  it('a block scalar that ends the file without a newline keeps its value (PyYAML): the block goes in before it, or install refuses', () => {
    const t = 'a: 1\nprompt: |\n  first\n  second';
    const once = addHooks(t, { command: cmd, timeout: 10 });
    expect(once.text.endsWith('\nprompt: |\n  first\n  second')).toBe(true);
    expect(parse(once.text).prompt).toBe(parse(t).prompt);
    expect(removeHooks(once.text).text).toBe(t);
    const inHooks = 'hooks:\n  on_session_end:\n    - command: /bin/x\n      note: |\n        text';
    expect(() => addHooks(inHooks, { command: cmd, timeout: 10 })).toThrow(/block scalar .* without a final newline/);
  });

  it.each([
    ['empty', ''],
    ['one newline', '\n'],
    ['only comments', '# my config\n\n# more later\n'],
    ['a comment, no final newline', '# nothing yet'],
  ])('a config.yaml that is %s gets the hooks; uninstall gives its bytes back', (_, text) => {
    const once = addHooks(text, { command: cmd, timeout: 10 });
    expect(Object.keys(parse(once.text).hooks).sort()).toEqual([...REGISTERED_HOOKS].sort());
    expect(removeHooks(once.text).text).toBe(text);
  });

  it('a file without a hooks block gets one appended; uninstall takes it away again exactly', () => {
    const plain = 'model:\n  provider: custom\n';
    const once = addHooks(plain, { command: cmd, timeout: 10 });
    expect(once.text.startsWith(plain)).toBe(true);
    expect(removeHooks(once.text).text).toBe(plain);
  });
});

describe('an install by an earlier version (entries without marks)', () => {
  const OLD =
    'model:\n  provider: custom\nhooks:\n  pre_tool_call:\n    - command: /usr/local/bin/my-guard\n      matcher: terminal\n    - command: /usr/bin/node /srv/hermes-aep/dist/src/shim/hook.cjs\n      timeout: 10\n  post_tool_call:\n    - command: /usr/bin/node /srv/hermes-aep/dist/src/cli.js hook\n      timeout: 10\n';
  const cmd = shimCommand('/usr/bin/node', '/home/u/.aep/state/hermes-aep/shim/0.1.0/hook.cjs');

  it("install replaces the old entries with marked ones; uninstall then leaves only the user's hooks", () => {
    const once = addHooks(OLD, { command: cmd, timeout: 10 });
    expect(once.changes.filter((c) => c.includes('refresh'))).toHaveLength(2);
    const cfg = parse(once.text);
    expect(cfg.hooks.pre_tool_call).toEqual([
      { command: '/usr/local/bin/my-guard', matcher: 'terminal' },
      { command: cmd, timeout: 10 },
    ]);
    expect(cfg.hooks.post_tool_call).toEqual([{ command: cmd, timeout: 10 }]);
    expect(once.text).not.toContain('/srv/hermes-aep');
    expect(addHooks(once.text, { command: cmd, timeout: 10 }).changed).toBe(false);
    expect(removeHooks(once.text).text).toBe(
      'model:\n  provider: custom\nhooks:\n  pre_tool_call:\n    - command: /usr/local/bin/my-guard\n      matcher: terminal\n',
    );
  });

  it('uninstall alone removes the old entries, and the keys and block they alone filled', () => {
    expect(removeHooks(OLD).text).toBe(
      'model:\n  provider: custom\nhooks:\n  pre_tool_call:\n    - command: /usr/local/bin/my-guard\n      matcher: terminal\n',
    );
    const onlyOurs = 'a: 1\nhooks:\n  on_session_end:\n    - command: /usr/bin/node /x/dist/src/shim/hook.cjs\n      timeout: 10\nb: 2\n';
    expect(removeHooks(onlyOurs).text).toBe('a: 1\nb: 2\n');
  });
});
