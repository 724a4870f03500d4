import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/paths.js';

/** Every TypeScript source file below `dir` (relative to the repository root). */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(rel));
    else if (/\.(c|m)?ts$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** The project files a file imports (type-only imports included: a cycle of types is a cycle of meaning too). */
function importsOf(file: string, known: ReadonlySet<string>): string[] {
  const info = ts.preProcessFile(readFileSync(path.join(ROOT, file), 'utf8'), true, true);
  const out: string[] = [];
  for (const ref of info.importedFiles) {
    if (!ref.fileName.startsWith('.')) continue;
    const target = path.normalize(path.join(path.dirname(file), ref.fileName)).replace(/\.(c|m)?js$/, (ext) => ext.replace('js', 'ts'));
    if (known.has(target)) out.push(target);
  }
  return out;
}

/** The cycles of a directed graph (Tarjan's strongly connected components of more than one file, or a self-import). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

describe('the import structure', () => {
  it('has no import cycle in src/', () => {
    const files = sources('src');
    const known = new Set(files);
    const graph = new Map(files.map((f) => [f, importsOf(f, known)]));
    // the check sees real imports: src/daemon/main.ts reaches dozens of files
    expect(graph.get(path.join('src', 'daemon', 'main.ts'))!.length).toBeGreaterThan(10);
    expect(cycles(graph)).toEqual([]);
  });

  it('the cycle finder finds a cycle (a check that can fail)', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(cycles(g)).toEqual([['a', 'b', 'c']]);
  });
});
