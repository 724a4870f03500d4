/**
 * The Dockerfile's build context against the tree: every `COPY` source exists
 * and survives .dockerignore, and the build stage copies every root that
 * tsconfig.build.json compiles. A source moved without the Dockerfile (as
 * `exporters/` once was) fails here, not at a user's `docker compose up --build`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, readJson } from '../../support/paths.js';

const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim().replace(/\/$/, ''))
  .filter((l) => l !== '' && !l.startsWith('#'));

/** the context sources of every `COPY` without `--from` (the last word is the destination) */
const copySources = dockerfile
  .split('\n')
  .filter((l) => /^COPY\s/.test(l) && !/\s--from=/.test(l))
  .flatMap((l) => l.trim().split(/\s+/).slice(1, -1));

/** what a source names in the tree: a glob's matching entries (one directory level), or the path itself */
function inTree(src: string): string[] {
  if (!src.includes('*')) return existsSync(path.join(ROOT, src)) ? [src] : [];
  const dir = path.dirname(src);
  const re = new RegExp(`^${path.basename(src).replace(/\./g, '\\.').replace(/\*/g, '[^/]*')}$`);
  return readdirSync(path.join(ROOT, dir))
    .filter((n) => re.test(n))
    .map((n) => path.join(dir, n));
}

describe('the Dockerfile builds from what the tree holds', () => {
  it('has COPY lines to check', () => {
    expect(copySources.length).toBeGreaterThan(0);
  });

  it.each(copySources)('COPY %s names files the tree has, not excluded by .dockerignore', (src) => {
    const found = inTree(src);
    expect(found, `${src}: nothing in the tree`).not.toEqual([]);
    for (const f of found) expect(ignored, `${f} is excluded by .dockerignore`).not.toContain(f.split('/')[0]);
  });

  it('names no BuildKit frontend: a `# syntax=` line makes BuildKit pull a frontend image, so the build would need a registry', () => {
    // a parser directive is only read before the first instruction or comment, but no such line belongs anywhere
    const directives = dockerfile.split('\n').filter((l) => /^#\s*syntax\s*=/i.test(l.trim()));
    expect(directives).toEqual([]);
  });

  it('the build stage copies every root tsconfig.build.json compiles', () => {
    const roots = readJson<{ include: string[] }>('tsconfig.build.json').include.map((g) => g.split('/')[0]!);
    for (const r of new Set(roots)) expect(copySources, `tsconfig.build.json compiles ${r}/`).toContain(r);
  });
});
