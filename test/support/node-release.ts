import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './paths.js';

const run = promisify(execFile);

/**
 * Releases older than package.json's engines floor that Hermes's environment
 * may still start the shim with (Hermes runs `node <shim>` with whatever
 * `node` is first on its PATH): the last Node 20 (end of life April 2026)
 * and the last Node 18.
 */
export const OLD_NODE_RELEASES: readonly string[] = ['20.20.2', '18.20.8'];

/**
 * The path of a Node.js binary of exactly `release` (x.y.z): the npm registry's `node` package, which `npm test`
 * installs before any test (test/prereqs, via scripts/provision-node.sh) into
 * `{HERMES_AEP_CACHE or ~/.cache/hermes-aep}/node-<release>` (the same cache `.ci/run` provisions Node 24 and 22 into).
 * Only read here (`--cached`): a test never waits on the registry. Never a machine path: whatever node the machine has,
 * the test gets this release. Rejects with what is missing and how to provide it.
 */
export async function nodeRelease(release: string): Promise<string> {
  let stdout: string;
  try {
    ({ stdout } = await run('bash', [path.join(ROOT, 'scripts', 'provision-node.sh'), '--cached', release], { timeout: 60_000 }));
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    const why = (e.stderr ?? '').trim().split('\n').at(-1) || e.message;
    throw new Error(
      `Node ${release} is not in the cache ${process.env.HERMES_AEP_CACHE ?? '~/.cache/hermes-aep'}: \`npm test\` installs it before the tests ` +
        `(node dist/test/prereqs/run.js runs that step alone; it needs the npm registry once). ${why}`,
      { cause: err },
    );
  }
  const node = /^NODE=(.+)$/m.exec(stdout)?.[1];
  if (!node) throw new Error(`scripts/provision-node.sh --cached ${release} printed no NODE= line: ${stdout}`);
  return node;
}
