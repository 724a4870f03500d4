import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { readFileSync } from 'node:fs';

/** The project root, from a test file anywhere under test/ (source or compiled). */
export const ROOT = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      readFileSync(path.join(dir, 'package.json'));
      if (!dir.endsWith(`${path.sep}dist`)) return dir;
    } catch {
      /* keep walking */
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error('package root not found');
    dir = up;
  }
})();

export function readJson<T = unknown>(rel: string): T {
  return JSON.parse(readFileSync(path.join(ROOT, rel), 'utf8')) as T;
}

/** The compiled CLI every process-level test runs (never a TypeScript loader). */
export const CLI = path.join(ROOT, 'dist', 'src', 'cli.js');

/** The fast shim launcher `install` registers with Hermes (`node <SHIM>`). */
export const SHIM = path.join(ROOT, 'dist', 'src', 'shim', 'hook.cjs');

/** The compiled JSON-parsing worker: in-process tests run from source, so they point the parser here. */
export const JSON_WORKER = pathToFileURL(path.join(ROOT, 'dist', 'src', 'transport', 'json-worker.js'));
