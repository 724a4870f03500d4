import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/paths.js';
import { tempDir } from '../support/processes.js';

const run = promisify(execFile);
const LAUNCHER = path.join(ROOT, 'bin', 'hermes-aep.js');

/**
 * The command `npm link` puts on PATH is bin/hermes-aep.js, not dist/src/cli.js: npm links a bin only when its
 * file exists, and the README's quickstart links before its first build (`npm ci && npm link && npm start`).
 */
describe('the hermes-aep launcher (package.json bin)', () => {
  it('is what package.json names as the bin, a file of the repository', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; files: string[] };
    expect(pkg.bin['hermes-aep']).toBe('bin/hermes-aep.js');
    expect(pkg.files).toContain('bin');
  });

  it('runs the built CLI with its arguments', async () => {
    const { stdout } = await run(process.execPath, [LAUNCHER, '--version']);
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(stdout.trim()).toBe(pkg.version);
    const help = await run(process.execPath, [LAUNCHER, 'demo', '--help']);
    expect(help.stdout).toContain('--jaeger-url');
  });

  it('in a checkout not built yet, says so in one line and exits 2', async () => {
    const checkout = tempDir('hermes-aep-launcher-');
    mkdirSync(path.join(checkout, 'bin'));
    copyFileSync(LAUNCHER, path.join(checkout, 'bin', 'hermes-aep.js'));
    const err = await run(process.execPath, [path.join(checkout, 'bin', 'hermes-aep.js'), 'tail']).then(
      () => undefined,
      (e: unknown) => e as { code?: number; stderr?: string },
    );
    expect(err?.code).toBe(2);
    expect(err?.stderr).toBe(`hermes-aep: not built yet: run \`npm run build\` (or \`npm start\`) in ${checkout}${path.sep}\n`);
  });
});
