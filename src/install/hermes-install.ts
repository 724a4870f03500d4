import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Where the installed Hermes's code is (the directory holding its `hermes_cli/` package), found from the outside without
 * running any Python: a PyPI install's site-packages, or the vendor installer's checkout (`~/.hermes/hermes-agent`).
 * `given` (`doctor --hermes`): the `hermes` executable, a venv, a checkout or site-packages, or `hermes_cli/` itself.
 * Without it: the `hermes` first on PATH, then `~/.hermes/hermes-agent`. Never throws.
 */
export type Located = { readonly ok: true; readonly root: string; readonly via: string } | { readonly ok: false; readonly problem: string };

const hasPackage = (dir: string): boolean => existsSync(path.join(dir, 'hermes_cli', 'plugins.py'));

function isDir(p: string): boolean {
  return statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

/** `<venv>/lib/python*\/site-packages` that hold hermes_cli, newest Python first. */
function sitePackages(venv: string): string | undefined {
  const lib = path.join(venv, 'lib');
  let entries: string[];
  try {
    entries = readdirSync(lib).filter((e) => /^python\d/.test(e));
  } catch {
    return undefined;
  }
  for (const e of entries.sort().reverse()) {
    const site = path.join(lib, e, 'site-packages');
    if (hasPackage(site)) return site;
  }
  return undefined;
}

/** A directory that is, holds, or is a venv for the package: the package's root, or undefined. */
function rootOfDir(dir: string): string | undefined {
  if (path.basename(dir) === 'hermes_cli' && existsSync(path.join(dir, 'plugins.py'))) return path.dirname(dir);
  if (hasPackage(dir)) return dir;
  const site = sitePackages(dir);
  if (site) return site;
  // the vendor installer's layout: a checkout with its venv inside, or a venv beside the checkout
  if (hasPackage(path.dirname(dir))) return path.dirname(dir);
  return undefined;
}

/** The `hermes` script's interpreter (its `#!` line), then that interpreter's venv. */
function rootOfScript(file: string): string | undefined {
  let head: string;
  try {
    head = readFileSync(file, { encoding: 'latin1' }).slice(0, 512).split('\n')[0] ?? '';
  } catch {
    return undefined;
  }
  const interp = /^#!\s*(\S+)/.exec(head)?.[1];
  if (!interp || !path.isAbsolute(interp)) return rootOfDir(path.dirname(path.dirname(file)));
  return rootOfDir(path.dirname(path.dirname(interp))) ?? rootOfDir(path.dirname(path.dirname(file)));
}

function fromPath(p: string): string | undefined {
  if (!existsSync(p)) return undefined;
  return isDir(p) ? rootOfDir(p) : rootOfScript(p);
}

function onPath(env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const file = path.join(dir, 'hermes');
    if (statSync(file, { throwIfNoEntry: false })?.isFile()) return file;
  }
  return undefined;
}

export function locateHermes(given: string | undefined, env: NodeJS.ProcessEnv = process.env): Located {
  try {
    if (given !== undefined) {
      const p = path.resolve(given);
      if (!existsSync(p)) return { ok: false, problem: `--hermes ${p} does not exist` };
      const root = fromPath(p);
      return root ? { ok: true, root, via: `--hermes ${p}` } : { ok: false, problem: `no hermes_cli/plugins.py found from --hermes ${p}` };
    }
    const script = onPath(env);
    const fromScript = script ? rootOfScript(script) : undefined;
    if (fromScript) return { ok: true, root: fromScript, via: `hermes on PATH (${script})` };
    const checkout = path.join(env.HOME || os.homedir(), '.hermes', 'hermes-agent');
    const fromCheckout = fromPath(checkout);
    if (fromCheckout) return { ok: true, root: fromCheckout, via: checkout };
    return {
      ok: false,
      problem: `no Hermes found: ${script ? `${script} (on PATH) leads to no hermes_cli/plugins.py, ` : 'no hermes on PATH, '}none at ${checkout}; give its place with --hermes`,
    };
  } catch (err) {
    return { ok: false, problem: `could not look for Hermes (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
}
