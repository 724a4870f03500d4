import { shlexJoin, shlexSplit } from './shell-words.js';

/**
 * The command install registers with Hermes, and how to recognise one this
 * tool wrote (this version's or an earlier one's), whatever its paths.
 */

/** The hook command: absolute node + the absolute shim file (+ its target options), quoted for shlex. */
export function shimCommand(nodePath: string, shimPath: string, args: readonly string[] = []): string {
  return shlexJoin([nodePath, shimPath, ...args]);
}

const SHIM_OPTIONS = new Set(['--socket', '--url', '--state-dir']);

/**
 * A command this tool wrote, whatever the paths: `<node> <stateDir>/shim/<version>/hook.cjs [options]`,
 * and the older `<node> <checkout>/dist/src/shim/hook.cjs` and `<node> <checkout>/dist/src/cli.js hook`.
 */
export function isOurCommand(command: unknown): boolean {
  if (typeof command !== 'string') return false;
  const argv = shlexSplit(command.trim());
  if (!argv || argv.length < 2) return false;
  const [, script, ...rest] = argv as [string, string, ...string[]];
  if (/(^|\/)dist\/src\/cli\.js$/.test(script)) return rest.length === 1 && rest[0] === 'hook';
  if (/(^|\/)dist\/src\/shim\/hook\.cjs$/.test(script) && rest.length === 0) return true;
  if (!/\/shim\/\d+\.\d+\.\d+[^/]*\/hook\.cjs$/.test(script)) return false;
  if (rest.length % 2 !== 0) return false;
  return rest.every((a, i) => i % 2 === 1 || SHIM_OPTIONS.has(a));
}
