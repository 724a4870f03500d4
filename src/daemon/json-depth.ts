import { knownDepth } from './json-body.js';

/** Hermes payloads nest a handful of levels; the bound keeps every recursive walk (digest, redaction) safe. */
export const MAX_DEPTH = 64;

/**
 * Iterative, so a hostile body cannot blow the stack while being measured; no
 * allocation per node. A body parsed by json-body.ts was measured by its scan
 * already: that answer is used instead of walking it again.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const known = knownDepth(value);
  if (known !== undefined) return known > limit;
  const values: unknown[] = [value];
  const depths: number[] = [0];
  const push = (child: unknown, d: number) => {
    if (typeof child !== 'object' || child === null) return;
    values.push(child);
    depths.push(d);
  };
  while (values.length > 0) {
    const v = values.pop() as object;
    const d = depths.pop()!;
    if (d >= limit) return true;
    if (Array.isArray(v)) for (const child of v) push(child, d + 1);
    else for (const k in v) push((v as Record<string, unknown>)[k], d + 1);
  }
  return false;
}
