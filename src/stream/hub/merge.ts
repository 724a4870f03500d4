import type { Held, Ring } from './ring.js';

interface Cursor {
  readonly it: Iterator<Held>;
  head: Held;
}

/**
 * Every held event of `rings` in arrival order: a k-way merge of rings that
 * are each in arrival order already (O(n log k), where sorting everything
 * would be O(n log n) on up to sessions × buffer events), keeping only what
 * `keep` accepts.
 */
export function mergeByArrival(rings: Iterable<Ring>, keep: (h: Held) => boolean): Held[] {
  const heap: Cursor[] = [];
  for (const r of rings) {
    const it = r[Symbol.iterator]();
    const first = it.next();
    if (!first.done) push(heap, { it, head: first.value });
  }
  const out: Held[] = [];
  while (heap.length > 0) {
    const top = heap[0]!;
    if (keep(top.head)) out.push(top.head);
    const next = top.it.next();
    if (next.done) {
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        down(heap, 0);
      }
    } else {
      top.head = next.value;
      down(heap, 0);
    }
  }
  return out;
}

function push(heap: Cursor[], c: Cursor): void {
  heap.push(c);
  let i = heap.length - 1;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (heap[p]!.head.n <= c.head.n) break;
    heap[i] = heap[p]!;
    i = p;
  }
  heap[i] = c;
}

function down(heap: Cursor[], i: number): void {
  const c = heap[i]!;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= heap.length) break;
    const r = l + 1;
    const m = r < heap.length && heap[r]!.head.n < heap[l]!.head.n ? r : l;
    if (heap[m]!.head.n >= c.head.n) break;
    heap[i] = heap[m]!;
    i = m;
  }
  heap[i] = c;
}
