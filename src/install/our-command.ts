import { shlexJoin, shlexSplit } from './shell-words.js';

/**
 * The command install registers with Hermes, and how to recognise one this
 * tool wrote (this version's or an earlier one's), whatever its paths.
 */

/** The hook command: absolute node + the absolute shim file (+ its target options), quoted for shlex. */
export function shimCommand(nodePath: string, shimPath: string, args: readonly string[] = []): string {
  return shlexJoin([nodePath, shimPath, ...args]);
}

/** The shim options install writes: the target's (each with a value), then the gates' (`--control` and `--instruct` take none). */
const VALUE_OPTIONS = new Set(['--socket', '--url', '--state-dir', '--attention-timeout-ms']);
const FLAG_OPTIONS = new Set(['--control', '--instruct']);

function onlyShimOptions(rest: readonly string[]): boolean {
  for (let i = 0; i < rest.length; i++) {
    if (FLAG_OPTIONS.has(rest[i]!)) continue;
    if (!VALUE_OPTIONS.has(rest[i]!) || i + 1 >= rest.length) return false;
    i++;
  }
  return true;
}

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
  return onlyShimOptions(rest);
}
