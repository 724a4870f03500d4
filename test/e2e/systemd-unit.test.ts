import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/paths.js';
import { tempDir } from '../support/processes.js';

const UNIT = path.join(ROOT, 'contrib', 'systemd', 'hermes-aep.service');

/** The unit exactly as the README's install lines render it for this checkout and this node. */
function rendered(): string {
  return readFileSync(UNIT, 'utf8').replaceAll('@NODE@', process.execPath).replaceAll('@ROOT@', ROOT);
}

describe('the shipped systemd user unit', () => {
  it('renders to a unit systemd-analyze verifies without a single warning', () => {
    const dir = tempDir('hermes-aep-systemd-');
    const file = path.join(dir, 'hermes-aep.service');
    writeFileSync(file, rendered());
    const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
    if (r.error) throw new Error(`systemd-analyze is required for this test (Debian: apt-get install systemd): ${r.error.message}`);
    expect(r.stderr.trim()).toBe('');
    expect(r.status).toBe(0);
  });

  it('runs the built daemon with the node that rendered it, and leaves no placeholder', () => {
    const text = rendered();
    expect(text).not.toMatch(/@[A-Z]+@/);
    const exec = /^ExecStart=(.+)$/m.exec(text)?.[1];
    expect(exec).toBe(`${process.execPath} ${path.join(ROOT, 'dist', 'src', 'cli.js')} daemon`);
  });

  it('a broken unit is caught (the check can fail)', () => {
    const dir = tempDir('hermes-aep-systemd-');
    const file = path.join(dir, 'hermes-aep.service');
    writeFileSync(file, rendered().replace('Restart=on-failure', 'Restart=sometimes'));
    const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
    expect(r.stderr).toMatch(/restart specifier/);
  });
});
