import { execFile } from 'node:child_process';
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The `node` install writes into the shell hook's command. Hermes runs that exact path for every hook, so it must
 * outlive the install: a node under a cache directory (a provisioned release under ~/.cache, an `npx` run) goes with
 * the next cache clean, and then every hook fails open without a word. The rule: the node running install when it is
 * outside every cache directory; else the first `node` on PATH outside them that runs a release the shim supports
 * (18 and later); else the running node, with a warning naming the risk and `hermes-aep doctor` as the check.
 */

/** The oldest Node.js major the shim runs on (the shim tests run it on the last 18 and 20 too). */
export const SHIM_NODE_FLOOR_MAJOR = 18;

export interface NodeCandidate {
  /** the path as found (what would be pinned: a stable symlink such as a package manager's stays a symlink) */
  readonly path: string;
  /** where it really is (what a cache clean would remove) */
  readonly real: string;
}

export interface RuntimePin {
  readonly node: string;
  /** the install report's line */
  readonly line: string;
  /** set when only a node under a cache directory was found */
  readonly warning?: string;
}

/** The directories a cache clean empties: ~/.cache, $XDG_CACHE_HOME, $HERMES_AEP_CACHE (absolute ones only). */
export function cacheRoots(env: NodeJS.ProcessEnv, home: string): string[] {
  const roots = [path.join(home, '.cache'), env.XDG_CACHE_HOME, env.HERMES_AEP_CACHE];
  return [...new Set(roots.filter((r): r is string => typeof r === 'string' && path.isAbsolute(r)).map((r) => path.resolve(r)))];
}

/** The cache directory `file` is under (npm's `_npx` directories wherever they are), or undefined. */
export function cacheOf(file: string, roots: readonly string[]): string | undefined {
  const root = roots.find((r) => file === r || file.startsWith(r + path.sep));
  if (root) return root;
  const parts = file.split(path.sep);
  const npx = parts.indexOf('_npx');
  return npx >= 0 ? parts.slice(0, npx + 1).join(path.sep) : undefined;
}

/** The major of a `node --version` answer (`v24.21.0`), or undefined when it is not one. */
export function nodeMajor(version: string | undefined): number | undefined {
  const m = /^v?(\d+)\.\d+\.\d+/.exec(version?.trim() ?? '');
  return m ? Number(m[1]) : undefined;
}

/**
 * The pure rule. `versionOf` answers `node --version` for a candidate on PATH (undefined when it does not run); it is
 * asked only for candidates outside the caches, in PATH order, until one is supported.
 */
export async function choosePin(
  running: NodeCandidate & { readonly version: string },
  onPath: readonly NodeCandidate[],
  roots: readonly string[],
  versionOf: (node: string) => Promise<string | undefined>,
): Promise<RuntimePin> {
  const runningCache = cacheOf(running.real, roots);
  if (runningCache === undefined) return { node: running.path, line: `runtime: ${running.path} (${running.version}, the node running install)` };
  for (const c of onPath) {
    if (cacheOf(c.real, roots) !== undefined) continue;
    const version = await versionOf(c.path);
    const major = nodeMajor(version);
    if (major === undefined || major < SHIM_NODE_FLOOR_MAJOR) continue;
    return {
      node: c.path,
      line: `runtime: ${c.path} (${version!.trim()}, the first node on PATH outside a cache directory; the node running install, ${running.path}, is under ${runningCache})`,
    };
  }
  return {
    node: running.path,
    line: `runtime: ${running.path} (${running.version}, the node running install)`,
    warning: `warning: the runtime ${running.path} is under the cache directory ${runningCache}: when that is cleaned every hook fails open silently; put a node ${SHIM_NODE_FLOOR_MAJOR}+ outside caches first on PATH and install again, and check with hermes-aep doctor`,
  };
}

/** Every executable `node` on PATH, in order (each directory once). */
export function nodesOnPath(env: NodeJS.ProcessEnv): NodeCandidate[] {
  const out: NodeCandidate[] = [];
  for (const dir of new Set((env.PATH ?? '').split(path.delimiter).filter((d) => path.isAbsolute(d)))) {
    const file = path.join(dir, 'node');
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      out.push({ path: file, real: realpathSync(file) });
    } catch {
      /* not there, not a file, not executable: not a candidate */
    }
  }
  return out;
}

/** `<node> --version`, bounded in time; undefined when it does not answer like a node. */
export function nodeVersion(node: string, timeoutMs = 3000): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(node, ['--version'], { timeout: timeoutMs, env: {} }, (err, stdout) => resolve(err ? undefined : String(stdout).trim() || undefined));
  });
}

/** The runtime install pins, from this process and its environment. */
export function pinRuntime(env: NodeJS.ProcessEnv = process.env): Promise<RuntimePin> {
  const real = (() => {
    try {
      return realpathSync(process.execPath);
    } catch {
      return process.execPath;
    }
  })();
  return choosePin({ path: process.execPath, real, version: process.version }, nodesOnPath(env), cacheRoots(env, env.HOME || os.homedir()), (n) =>
    nodeVersion(n),
  );
}
