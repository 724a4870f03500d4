/**
 * scripts/check-node.cjs, which `npm test` and `npm start` run first (pretest, prestart): on a Node older than the engines
 * floor it stops with one line naming the fix; on a Node the floor admits it says nothing. Run on the real old releases
 * (the cache test/prereqs fills), since the point is that it runs there at all.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { OLD_NODE_RELEASES, nodeRelease } from '../../support/node-release.js';
import { ROOT, readJson } from '../../support/paths.js';

const run = promisify(execFile);
const CHECK = path.join(ROOT, 'scripts', 'check-node.cjs');

async function check(node: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(node, [CHECK], { cwd: ROOT });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('scripts/check-node.cjs (npm test and npm start run it first)', () => {
  it('is what pretest and prestart run', () => {
    const { scripts } = readJson<{ scripts: Record<string, string> }>('package.json');
    expect([scripts.pretest, scripts.prestart]).toEqual(['node scripts/check-node.cjs', 'node scripts/check-node.cjs']);
  });

  it.each(OLD_NODE_RELEASES)('on Node %s: exit 1 and one line naming the floor, this node, and how to get Node 24', async (release) => {
    const node = await nodeRelease(release);
    const r = await check(node);
    console.log(r.stderr);
    const floor = readJson<{ engines: { node: string } }>('package.json').engines.node.replace(/^>=\s*/, '');
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr.split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^hermes-aep needs Node >= ${floor.replaceAll('.', '\\.')} \\(24 LTS recommended\\); this is node v${release.replaceAll('.', '\\.')} at /\\S+/node\\. ` +
            `Get it: eval "\\$\\(scripts/provision-node\\.sh 24\\.\\d+\\.\\d+ --export\\)" \\(or nvm install 24\\)$`,
        ),
      ),
      '',
    ]);
  });

  it('on the Node running the tests (within the floor): exit 0, silent', async () => {
    expect(await check(process.execPath)).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});
