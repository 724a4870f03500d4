import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../version.js';
import { fail, ok, warn, type Check } from './check.js';

const FIX =
  'use Node.js 24 LTS: scripts/provision-node.sh 24.21.0 in the checkout prints NODE=<its path> (or nvm install 24), then npm link again with it first on PATH';

const parts = (v: string): [number, number, number] => {
  const [a = 0, b = 0, c = 0] = v
    .replace(/^v/, '')
    .split('.')
    .map((x) => Number.parseInt(x, 10) || 0);
  return [a, b, c];
};

const older = (v: string, floor: string): boolean => {
  const [a, b, c] = parts(v);
  const [x, y, z] = parts(floor);
  return a !== x ? a < x : b !== y ? b < y : c < z;
};

/** The runtime doctor runs on against package.json `engines.node` (a `>=x.y[.z]` floor). */
export function runtimeCheck(version: string, execPath: string, engines: string | undefined): Check {
  const floor = /^>=\s*v?(\d+(\.\d+){0,2})$/.exec(engines?.trim() ?? '')?.[1];
  const what = 'runtime';
  if (floor === undefined)
    return warn(what, `node ${version} at ${execPath}; package.json engines.node (${engines ?? 'absent'}) is not a >= floor doctor reads`, FIX);
  if (older(version, floor)) return fail(what, `node ${version} at ${execPath} is older than ${floor} (package.json engines)`, FIX);
  const lts = parts(version)[0] === 24 ? '' : '; Node 24 LTS is the one recommended';
  return ok(what, `node ${version} at ${execPath} (engines ${engines}${lts})`);
}

export function checkRuntime(): Check {
  let engines: string | undefined;
  try {
    engines = (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { engines?: { node?: string } }).engines?.node;
  } catch {
    engines = undefined;
  }
  return runtimeCheck(process.version, process.execPath, engines);
}
