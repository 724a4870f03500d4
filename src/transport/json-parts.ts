/**
 * A large parsed value crosses from the JSON worker to the daemon's thread in
 * parts of bounded size, one part per turn of the daemon's event loop, so
 * receiving a 60 MB conversation never blocks other hooks for the time it
 * takes to copy all of it at once. A part is either a whole small subtree at
 * a path, or an empty container to be filled by the parts after it; parts
 * come in document order, so keys keep their order.
 */

export type Path = readonly (string | number)[];

export type Part = { readonly path: Path; readonly value: unknown } | { readonly path: Path; readonly container: 'array' | 'object' };

/** Rough serialized size: string lengths plus a little per node (computed once per subtree, bottom-up). */
function sizes(root: unknown): Map<object, number> {
  const out = new Map<object, number>();
  const size = (v: unknown): number => {
    if (typeof v === 'string') return v.length + 2;
    if (typeof v !== 'object' || v === null) return 8;
    const known = out.get(v);
    if (known !== undefined) return known;
    let n = 2;
    if (Array.isArray(v)) for (const x of v) n += size(x) + 1;
    else for (const k in v) n += k.length + 4 + size((v as Record<string, unknown>)[k]);
    out.set(v, n);
    return n;
  };
  // depth is bounded (the scan refuses more than 64 levels), so this recursion is safe
  size(root);
  return out;
}

/**
 * Split a value into batches of parts, each about `maxBytes` (a single
 * larger string stays whole); one batch when the value is small.
 */
export function splitValue(root: unknown, maxBytes: number): Part[][] {
  const size = sizes(root);
  const sizeOf = (v: unknown) => (typeof v === 'string' ? v.length + 2 : typeof v === 'object' && v !== null ? (size.get(v) ?? 0) : 8);
  const batches: Part[][] = [];
  let batch: Part[] = [];
  let bytes = 0;
  const add = (p: Part, n: number) => {
    if (batch.length > 0 && bytes + n > maxBytes) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(p);
    bytes += n;
  };
  const walk = (v: unknown, path: Path) => {
    const n = sizeOf(v);
    if (typeof v !== 'object' || v === null || n <= maxBytes) return add({ path, value: v }, n);
    if (Array.isArray(v)) {
      add({ path, container: 'array' }, 16);
      v.forEach((x, i) => walk(x, [...path, i]));
    } else {
      add({ path, container: 'object' }, 16);
      for (const k in v) walk((v as Record<string, unknown>)[k], [...path, k]);
    }
  };
  walk(root, []);
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** Rebuilds the value on the receiving side, part by part. */
export class Assembler {
  private root: unknown;

  apply(parts: readonly Part[]): void {
    for (const p of parts) {
      const v = 'container' in p ? (p.container === 'array' ? [] : {}) : p.value;
      if (p.path.length === 0) {
        this.root = v;
        continue;
      }
      let parent = this.root as Record<string | number, unknown>;
      for (let i = 0; i < p.path.length - 1; i++) parent = parent[p.path[i]!] as Record<string | number, unknown>;
      const key = p.path[p.path.length - 1]!;
      // an own data property, never the __proto__ setter (the parse already dropped such keys)
      if (key === '__proto__') Object.defineProperty(parent, key, { value: v, enumerable: true, writable: true, configurable: true });
      else parent[key] = v;
    }
  }

  get value(): unknown {
    return this.root;
  }
}
