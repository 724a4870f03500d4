import { describe, expect, it } from 'vitest';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { addHooks, enablePlugin, removeHooks } from '../../../src/install/hermes-config.js';
import { REGISTERED_HOOKS } from '../../../src/hermes/envelope.js';
import { CLI, readJson, ROOT } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';
import { requirePython } from '../../support/python.js';

const run = promisify(execFile);
const ENTRY = { command: '/usr/bin/node /home/u/.aep/state/hermes-aep/shim/0.1.0/hook.cjs', timeout: 10 };

describe('the plugins.enabled edit (pure)', () => {
  it.each([
    ['no plugins block', 'model:\n  default: x\n', ['hermes-aep']],
    ['an empty file', '', ['hermes-aep']],
    ['a block enabled list', 'plugins:\n  enabled:\n    - disk-cleanup   # mine\n', ['disk-cleanup', 'hermes-aep']],
    ['a flow enabled list with a comment', 'plugins:\n  enabled: [disk-cleanup, "x y"]  # mine\nz: 1\n', ['disk-cleanup', 'x y', 'hermes-aep']],
    ['an empty flow list', 'plugins:\n    enabled: []\n', ['hermes-aep']],
    ['no enabled key, a disabled list', 'plugins:\n  disabled:\n    - old\n', ['hermes-aep']],
    ['plugins: ~', 'plugins: ~\n', ['hermes-aep']],
    ['plugins: {}', 'a: 1\nplugins: {}   # none\n', ['hermes-aep']],
    ['CRLF, no final newline', 'a: 1\r\nplugins:\r\n  enabled:\r\n  - one', ['one', 'hermes-aep']],
  ])('%s: enabled as Hermes reads it, and uninstall gives back every byte', (_name, original, want) => {
    const once = enablePlugin(original);
    expect(once.changed).toBe(true);
    expect(parse(once.text).plugins.enabled).toEqual(want);
    expect(removeHooks(once.text).text).toBe(original);
    expect(enablePlugin(once.text).changed).toBe(false);
  });

  it('a name the user enabled themselves is left alone, before and after', () => {
    const original = 'plugins:\n  enabled: [hermes-aep]\n';
    expect(enablePlugin(original)).toMatchObject({ changed: false, text: original });
    expect(removeHooks(original).text).toBe(original);
  });

  it('a name the user adds under the enabled: install wrote stays enabled after uninstall', () => {
    const once = enablePlugin('model: {}\n').text;
    const edited = once.replace('    - hermes-aep  # added by hermes-aep\n', '    - hermes-aep  # added by hermes-aep\n    - mine\n');
    const back = removeHooks(edited).text;
    expect(parse(back)).toEqual({ model: {}, plugins: { enabled: ['mine'] } });
    expect(back).not.toContain('hermes-aep');
  });

  it('refuses what it cannot edit safely, with the reason', () => {
    expect(() => enablePlugin('plugins:\n  disabled: [hermes-aep]\n')).toThrow(/plugins.disabled lists hermes-aep/);
    expect(() => enablePlugin('plugins:\n  enabled: [a,\n    b]\n')).toThrow(/several lines/);
    expect(() => enablePlugin('plugins: [a]\n')).toThrow(/must be a mapping/);
    expect(() => enablePlugin('plugins:\n  enabled: yes\n')).toThrow(/list of plugin names/);
    expect(() => enablePlugin('p: &p [a]\nplugins:\n  enabled: *p\n')).toThrow(/alias/);
  });

  it('switching: the plugin edit takes our shell hooks out, the shell install takes the plugin lines out', () => {
    const original = 'model:\n  default: x\nhooks:\n  on_session_end:\n    - command: /bin/true\n';
    const shell = addHooks(original, ENTRY).text;
    const plugin = enablePlugin(shell);
    expect(plugin.changes).toContain('plugins.enabled: add hermes-aep');
    expect(parse(plugin.text).hooks).toEqual({ on_session_end: [{ command: '/bin/true' }] });
    const again = addHooks(plugin.text, ENTRY);
    expect(again.changes[0]).toBe('plugins.enabled: remove hermes-aep');
    expect(parse(again.text).plugins).toBeUndefined();
    expect(again.text).toBe(shell);
    expect(removeHooks(plugin.text).text).toBe(original);
  });

  it('PyYAML (what Hermes reads with) sees hermes-aep enabled and every other value as before', () => {
    requirePython('yaml');
    const original = 'model:\n  mode: 0755\nplugins:\n  enabled: [disk-cleanup]  # mine\n';
    const read = (text: string) =>
      JSON.parse(execFileSync('python3', ['-c', 'import sys, json, yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'], { input: text, encoding: 'utf8' }));
    expect(read(enablePlugin(original).text)).toEqual({ ...read(original), plugins: { enabled: ['disk-cleanup', 'hermes-aep'] } });
  });
});

describe('the plugin files', () => {
  it('plugin.yaml names the package version and the thirteen hooks; __init__.py registers the same thirteen', () => {
    const manifest = parse(readFileSync(path.join(ROOT, 'plugin', 'hermes-aep', 'plugin.yaml'), 'utf8'));
    expect(manifest.name).toBe('hermes-aep');
    expect(String(manifest.version)).toBe(readJson<{ version: string }>('package.json').version);
    expect(manifest.provides_hooks).toEqual([...REGISTERED_HOOKS]);
    requirePython();
    const load =
      'import sys, json, importlib.util as u; s = u.spec_from_file_location("p", sys.argv[1]); m = u.module_from_spec(s); s.loader.exec_module(m); print(json.dumps(m.HOOKS))';
    const hooks = execFileSync('python3', ['-c', load, path.join(ROOT, 'plugin', 'hermes-aep', '__init__.py')], { encoding: 'utf8' });
    expect(JSON.parse(hooks)).toEqual([...REGISTERED_HOOKS]);
  });

  it('package.json ships plugin/', () => {
    expect(readJson<{ files: string[] }>('package.json').files).toContain('plugin');
  });
});

describe('hermes-aep install --transport plugin / uninstall (the real CLI on a temp HERMES_HOME)', () => {
  const setup = () => {
    const home = tempDir();
    const state = path.join(tempDir(), 'state');
    const cfg = 'model:\n  provider: custom   # keep me\nhooks:\n  on_session_end:\n    - command: /bin/true\n';
    const allow = '{"approvals": [{"event": "on_session_end", "command": "/bin/true"}]}\n';
    writeFileSync(path.join(home, 'config.yaml'), cfg);
    writeFileSync(path.join(home, 'shell-hooks-allowlist.json'), allow);
    const env = { ...process.env, HERMES_HOME: home, AEP_STATE_DIR: state };
    const cli = (...args: string[]) => run(process.execPath, [CLI, ...args], { env });
    const files = () => [readFileSync(path.join(home, 'config.yaml'), 'utf8'), readFileSync(path.join(home, 'shell-hooks-allowlist.json'), 'utf8')];
    return { home, state, cfg, allow, cli, files, dir: path.join(home, 'plugins', 'hermes-aep') };
  };

  it('shell → plugin → shell → uninstall: each step replaces the other transport; uninstall gives back both files and takes the plugin away', async () => {
    const t = setup();
    await t.cli('install');
    const [shellCfg, shellAllow] = t.files();
    const p = await t.cli('install', '--transport', 'plugin', '--socket', '/run/aep/hook.sock');
    expect(p.stdout).toContain('plugins.enabled: add hermes-aep');
    const [cfg, allow] = t.files();
    expect(parse(cfg!).plugins.enabled).toEqual(['hermes-aep']);
    expect(parse(cfg!).hooks).toEqual({ on_session_end: [{ command: '/bin/true' }] });
    expect(allow).toBe(t.allow);
    expect(readdirSync(t.dir).sort()).toEqual(['__init__.py', 'hermes-aep.json', 'plugin.yaml']);
    expect(readFileSync(path.join(t.dir, '__init__.py'))).toEqual(readFileSync(path.join(ROOT, 'plugin', 'hermes-aep', '__init__.py')));
    expect(JSON.parse(readFileSync(path.join(t.dir, 'hermes-aep.json'), 'utf8'))).toEqual({
      installed_by: 'hermes-aep',
      version: readJson<{ version: string }>('package.json').version,
      args: ['--state-dir', t.state, '--socket', '/run/aep/hook.sock'],
    });
    // again: nothing changes
    const again = await t.cli('install', '--transport', 'plugin', '--socket', '/run/aep/hook.sock');
    expect(again.stdout).toContain('already in place');
    expect(t.files()).toEqual([cfg, allow]);
    // back to the shell transport: the same bytes as the first shell install (the approvals' timestamps aside)
    await t.cli('install');
    expect(t.files()[0]).toBe(shellCfg);
    expect(JSON.parse(t.files()[1]!).approvals).toHaveLength(JSON.parse(shellAllow!).approvals.length);
    expect(existsSync(path.join(t.home, 'plugins'))).toBe(false);
    await t.cli('install', '--transport', 'plugin');
    const u = await t.cli('uninstall');
    expect(u.stdout).toContain(`plugin: remove ${t.dir}`);
    expect(t.files()).toEqual([t.cfg, t.allow]);
    expect(existsSync(path.join(t.home, 'plugins'))).toBe(false);
  });

  it('--dry-run writes nothing; a plugins/hermes-aep this tool did not write is refused, untouched', async () => {
    const t = setup();
    const dry = await t.cli('install', '--transport', 'plugin', '--dry-run');
    expect(dry.stdout).toContain('dry run');
    expect(t.files()).toEqual([t.cfg, t.allow]);
    expect(existsSync(t.dir)).toBe(false);
    mkdirSync(t.dir, { recursive: true });
    writeFileSync(path.join(t.dir, '__init__.py'), '# someone else\n');
    await expect(t.cli('install', '--transport', 'plugin')).rejects.toMatchObject({ stderr: expect.stringMatching(/was not written by hermes-aep/) });
    expect(t.files()).toEqual([t.cfg, t.allow]);
    await t.cli('uninstall');
    expect(readFileSync(path.join(t.dir, '__init__.py'), 'utf8')).toBe('# someone else\n');
    await expect(t.cli('install', '--transport', 'nope')).rejects.toMatchObject({ stderr: expect.stringMatching(/--transport takes shell/) });
  });

  it("plugins.enabled added where Hermes's config migration would still grandfather other user plugins: one line on stderr names them", async () => {
    const t = setup();
    const plugins = path.join(t.home, 'plugins');
    const manifest = (dir: string, file: string, text: string) => {
      mkdirSync(path.join(plugins, dir), { recursive: true });
      writeFileSync(path.join(plugins, dir, file), text);
    };
    manifest('foo', 'plugin.yaml', 'name: foo\n');
    manifest('bar', 'plugin.yml', 'name: barname\n');
    manifest('old', 'plugin.yaml', 'name: old\n');
    mkdirSync(path.join(plugins, 'no-manifest'));
    writeFileSync(path.join(plugins, 'loose.yaml'), 'name: loose\n');
    writeFileSync(path.join(t.home, 'config.yaml'), 'model:\n  provider: custom\nplugins:\n  disabled: [old]\n');
    const dry = await t.cli('install', '--transport', 'plugin', '--dry-run');
    const p = await t.cli('install', '--transport', 'plugin');
    for (const r of [dry, p]) {
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/config migration/);
      expect(r.stderr).toContain('bar (barname), foo');
      expect(r.stderr).toContain('hermes plugins enable');
      expect(r.stderr).not.toMatch(/\bold\b|no-manifest|loose/);
      expect(r.stdout).not.toMatch(/foo|barname/);
    }
    // nothing to say: plugins.enabled already there (our own now), a config at schema 21 or later, no other plugin
    expect((await t.cli('install', '--transport', 'plugin')).stderr).toBe('');
    await t.cli('uninstall');
    writeFileSync(path.join(t.home, 'config.yaml'), 'model: {}\n_config_version: 21\n');
    expect((await t.cli('install', '--transport', 'plugin')).stderr).toBe('');
    await t.cli('uninstall');
    writeFileSync(path.join(t.home, 'config.yaml'), 'model: {}\n_config_version: "20"\n');
    expect((await t.cli('install', '--transport', 'plugin')).stderr).toContain('bar (barname), foo');
    await t.cli('uninstall');
    for (const d of ['foo', 'bar', 'old']) rmSync(path.join(plugins, d), { recursive: true });
    writeFileSync(path.join(t.home, 'config.yaml'), 'model: {}\n');
    expect((await t.cli('install', '--transport', 'plugin')).stderr).toBe('');
  });
});
