import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's own version (package.json, found from this file in the source tree or under dist/). */
export function packageVersion(): string {
  return findPackage().version;
}

/** The package's root directory (where its package.json is). */
export function packageRoot(): string {
  return findPackage().dir;
}

function findPackage(): { dir: string; version: string } {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'hermes-aep' && typeof pkg.version === 'string') return { dir, version: pkg.version };
    } catch {
      /* keep walking */
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error('hermes-aep package.json not found');
    dir = up;
  }
}
