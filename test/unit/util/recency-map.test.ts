import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RecencyMap, RecencySet } from '../../../src/util/recency-map.js';

/** The reference: a plain capped Map (delete, set, evict the first key): correct, but slow to evict (see RecencyMap). */
function naiveSet<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as K);
}

describe('RecencyMap', () => {
  it('keeps exactly what a naive capped Map keeps, in the same order, whatever the operations', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant('shift' as const), key: fc.constant(0) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.array(op, { maxLength: 400 }), (max, ops) => {
        const ref = new Map<number, number>();
        const m = new RecencyMap<number, number>(max);
        ops.forEach((o, i) => {
          if (o.kind === 'set') {
            naiveSet(ref, o.key, i, max);
            m.set(o.key, i);
          } else if (o.kind === 'delete') {
            expect(m.delete(o.key)).toBe(ref.delete(o.key));
          } else {
            const first = ref.keys().next();
            if (!first.done) ref.delete(first.value);
            expect(m.shift()?.[0]).toBe(first.done ? undefined : first.value);
          }
          expect([...m.entries()]).toEqual([...ref.entries()]);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('300,000 inserts into a map capped at 50,000: the newest 50,000 stay', () => {
    const m = new RecencyMap<string, number>(50_000);
    for (let i = 0; i < 300_000; i++) m.set(`event-${i}`, i);
    expect(m.size).toBe(50_000);
    expect(m.has('event-249999')).toBe(false);
    expect(m.has('event-250000')).toBe(true);
    // that it evicts in constant time (the naive pattern took 26 s here: a fresh iterator walks every deleted hole)
    // is bench suite bounded-work's bounded.recency_eviction: these inserts against the same ones into a map that never evicts
  });

  it('reads never refresh: the oldest SET key goes first, however often it was read', () => {
    const m = new RecencyMap<string, number>(2);
    m.set('a', 1);
    m.set('b', 2);
    for (let i = 0; i < 3; i++) {
      expect(m.get('a')).toBe(1);
      expect(m.has('a')).toBe(true);
    }
    expect(m.set('c', 3)).toEqual(['a', 1]);
    expect([...m.keys()]).toEqual(['b', 'c']);
  });

  it('max Infinity: nothing is evicted but through shift', () => {
    const m = new RecencyMap<number, number>(Infinity);
    let evicted = 0;
    for (let i = 0; i < 100_000; i++) if (m.set(i, i)) evicted++;
    expect(evicted).toBe(0);
    expect(m.size).toBe(100_000);
    expect(m.shift()).toEqual([0, 0]);
    expect(m.keys().next().value).toBe(1);
    expect(() => new RecencyMap(0)).toThrow(RangeError);
  });

  it('a set iterates its keys oldest first and refreshes on add', () => {
    const s = new RecencySet<string>(3);
    for (const k of ['a', 'b', 'c', 'a', 'd']) s.add(k);
    expect([...s]).toEqual(['c', 'a', 'd']);
  });
});

describe('RecencyMap.load', () => {
  it('fills an empty map exactly as a naive capped Map set in order would, duplicates and filters included', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }), fc.array(fc.integer({ min: 0, max: 15 }), { maxLength: 60 }), fc.boolean(), (max, keys, filter) => {
        const only = filter ? (k: number) => k % 3 !== 0 : undefined;
        const ref = new Map<number, number>();
        keys.forEach((k, i) => {
          if (!only || only(k)) naiveSet(ref, k, i, max);
        });
        const m = new RecencyMap<number, number>(max);
        m.load(
          keys,
          keys.map((_, i) => i),
          only,
        );
        expect([...m.entries()]).toEqual([...ref.entries()]);
      }),
      { numRuns: 300 },
    );
  });
});
