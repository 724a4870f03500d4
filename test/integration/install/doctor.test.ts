/**
 * `hermes-aep doctor` run as a user runs it (the built CLI, a child process) against the REAL Hermes releases the e2e tier runs,
 * provisioned from PyPI by scripts/provision-hermes.sh into the version-keyed cache (a warm cache only prints the path), and
 * against a stand-in laid out as 0.21.3 lays its hook list out. Hermes is never imported: 0.21 needs Python 3.14, 0.18 < 3.14.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BASELINE_HOOKS } from '../../../src/hermes/known-hooks.js';
import { readSetLiteral } from '../../../src/install/valid-hooks.js';
import { CLI, ROOT } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';
import { hermesTree, PLUGINS_PY_0_21_3_LAYOUT } from '../../support/hermes-tree.js';
import { DOCTOR_HERMES_RELEASES } from '../../support/hermes-release.js';

const run = promisify(execFile);

/** The `hermes` executable of a PyPI release, from the cache (`npm test` installs it there first: test/prereqs). */
async function provisionedHermes(version: string): Promise<string> {
  const { stdout } = await run('bash', [path.join(ROOT, 'scripts', 'provision-hermes.sh'), '--cached'], {
    env: { ...process.env, HERMES_VERSION: version },
    timeout: 20 * 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  const bin = /^HERMES=(.+)$/m.exec(stdout)?.[1];
  if (!bin) throw new Error(`provision-hermes.sh ${version} printed no HERMES= line`);
  return bin;
}

/** The hermes check's line (doctor's other checks depend on the machine: a daemon, an install). */
const hermesLine = (stdout: string): string | undefined => /^(ok {4}|warn {2}|FAIL {2})hermes: .*$/m.exec(stdout)?.[0];

/** The CLI's exit status and output (a non-zero exit is an answer here, not an error). */
async function doctorCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, 'doctor', ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe.each(DOCTOR_HERMES_RELEASES)('doctor against the real Hermes %s from PyPI', (version) => {
  it(
    'finds it from its hermes executable, reads its version and its 23 hooks (one a line, comments between), no drift: the hermes check is ok',
    async () => {
      const bin = await provisionedHermes(version);
      const r = await doctorCli(['--hermes', bin]);
      console.log(r.stdout);
      expect([hermesLine(r.stdout), r.stderr]).toEqual([expect.stringMatching(/^ok {4}hermes: /), '']);
      expect(r.stdout).toContain(`      version: ${version}\n`);
      expect(r.stdout).toContain('  hooks: 23 in VALID_HOOKS\n');
      expect(r.stdout).toContain('  unknown to the mapping: (none)\n');
      expect(r.stdout).toContain('  known, but gone: (none)\n');
      expect(r.stdout).toContain('  outbound webhooks: no\n');
      // the names read are exactly the design record's: checked against the real file, read here at test time
      const located = /^ok {4}hermes: Hermes at (.+) \(found via/m.exec(r.stdout)?.[1];
      const real = readSetLiteral(readFileSync(path.join(located!, 'plugins.py'), 'utf8'), 'VALID_HOOKS');
      expect(real.ok && [...real.value.names].sort()).toEqual([...BASELINE_HOOKS].sort());
      // the same install found from its venv, and from `hermes` first on PATH with no --hermes
      const venv = path.dirname(path.dirname(bin));
      expect((await doctorCli(['--hermes', venv])).stdout).toContain(`  version: ${version}\n`);
      const onPath = await doctorCli([], { ...process.env, PATH: `${path.dirname(bin)}${path.delimiter}${process.env.PATH ?? ''}` });
      expect(hermesLine(onPath.stdout)).toMatch(`(found via hermes on PATH (${bin}))`);
    },
    20 * 60_000,
  );
});

describe('doctor against a stand-in laid out as 0.21.3', () => {
  it("the vendor installer's checkout (~/.hermes/hermes-agent with its venv): its 16 new hooks all decided, outbound webhooks: the hermes check is ok", async () => {
    const home = tempDir();
    const checkout = path.join(home, '.hermes', 'hermes-agent');
    mkdirSync(path.join(checkout, 'hermes_cli'), { recursive: true });
    mkdirSync(path.join(checkout, 'agent'));
    writeFileSync(path.join(checkout, 'hermes_cli', '__init__.py'), '__version__ = "0.21.3"\n__release_date__ = "2026.9.14"\n');
    writeFileSync(path.join(checkout, 'hermes_cli', 'plugins.py'), PLUGINS_PY_0_21_3_LAYOUT);
    writeFileSync(path.join(checkout, 'agent', 'outbound_webhooks.py'), '');
    const r = await doctorCli([], { ...process.env, HOME: home, PATH: path.dirname(process.execPath) });
    console.log(r.stdout);
    expect([hermesLine(r.stdout), r.stderr]).toEqual([expect.stringMatching(/^ok {4}hermes: /), '']);
    expect(r.stdout).toContain(`(found via ${checkout})`);
    expect(r.stdout).toContain('  version: 0.21.3\n');
    expect(r.stdout).toContain('  hooks: 39 in VALID_HOOKS\n');
    expect(r.stdout).toContain('  unknown to the mapping: (none)\n');
    expect(r.stdout).toContain('  outbound webhooks: yes (agent/outbound_webhooks.py)\n');
    // a hermes script on PATH whose interpreter lives in the checkout's venv leads to the same place
    const bin = path.join(checkout, 'venv', 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(path.join(bin, 'hermes'), `#!${path.join(bin, 'python')}\nimport sys\n`);
    chmodSync(path.join(bin, 'hermes'), 0o755);
    const viaPath = await doctorCli([], { ...process.env, HOME: tempDir(), PATH: `${bin}${path.delimiter}${path.dirname(process.execPath)}` });
    expect(hermesLine(viaPath.stdout)).toContain(`ok    hermes: Hermes at ${path.join(checkout, 'hermes_cli')} (found via hermes on PATH`);
  });

  it('nothing to read: a clear FAIL line on stdout with its fix, exit 1, no stack trace', async () => {
    for (const given of [path.join(tempDir(), 'missing'), hermesTree({ init: '' }), hermesTree({ plugins: 'VALID_HOOKS = {"a",\n' })]) {
      const r = await doctorCli(['--hermes', given]);
      expect([r.code, r.stderr], given).toEqual([1, '']);
      expect(hermesLine(r.stdout)).toMatch(/^FAIL {2}hermes: /);
      expect(r.stdout).toContain('      fix: give its place: hermes-aep doctor --hermes <its executable, venv or checkout>\n');
      expect(r.stdout).not.toMatch(/\n\s+at /);
    }
  });

  it('--help states the exit statuses', async () => {
    const r = await doctorCli(['--help']);
    expect(r.stdout).toContain('Exit status: 0 all ok (warnings allowed); 1 any FAIL; 2 doctor itself could not run.');
  });
});
