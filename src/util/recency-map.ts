/**
 * A Map that keeps its newest `max` keys: `set` inserts or refreshes a key
 * (it moves to the newest end) and evicts the oldest beyond `max`.
 *
 * Why not `map.keys().next()` on every eviction: V8 leaves a deleted entry as
 * a hole in the Map's backing table until the table is rehashed, and a FRESH
 * iterator walks every hole from the front. A capped map that evicts on each
 * insert therefore pays for thousands of holes per insert (300,000 inserts
 * into a map capped at 50,000 took 26 s on a loaded 2-core machine). One
 * long-lived iterator instead resumes where it stopped: every entry before
 * it was evicted through it, so its next key is always the oldest live one.
 * It is re-created after a map's worth of operations without an eviction, so
 * it never pins a long chain of the Map's superseded tables.
 */
export class RecencyMap<K, V> {
  private readonly map = new Map<K, V>();
  private oldest: Iterator<K> | undefined;
  private sinceEviction = 0;

  /** `max` may be Infinity: then nothing is evicted but through `shift` */
  constructor(readonly max: number) {
    if (!(max >= 1)) throw new RangeError('RecencyMap needs max >= 1');
  }

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  /** Insert or refresh `key` as the newest; returns the evicted key's entry, if one was evicted. */
  set(key: K, value: V): [K, V] | undefined {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size <= this.max) {
      if (++this.sinceEviction > Math.max(1024, this.map.size)) this.oldest = undefined;
      return undefined;
    }
    return this.shift();
  }

  /** Remove and return the oldest entry. */
  shift(): [K, V] | undefined {
    this.sinceEviction = 0;
    let next = (this.oldest ??= this.map.keys()).next();
    if (next.done) {
      // only when the map is empty; a spent iterator stays spent, so start a new one
      this.oldest = this.map.keys();
      next = this.oldest.next();
      if (next.done) return undefined;
    }
    const victim = next.value;
    const v = this.map.get(victim) as V;
    this.map.delete(victim);
    return [victim, v];
  }

  /**
   * Fill an empty map from keys and values listed oldest first (a saved
   * state): the same result as `set` for each in order, without its checks.
   */
  load(keys: readonly K[], values: readonly V[], only?: (key: K) => boolean): void {
    if (this.map.size > 0) throw new Error('RecencyMap.load needs an empty map');
    let n = 0;
    for (let i = 0; i < keys.length; i++) {
      if (only && !only(keys[i]!)) continue;
      this.map.set(keys[i]!, values[i]!);
      n++;
    }
    if (this.map.size !== n) {
      // a key listed twice: again, with set's rule (it takes its last position)
      this.map.clear();
      for (let i = 0; i < keys.length; i++) {
        if (only && !only(keys[i]!)) continue;
        this.map.delete(keys[i]!);
        this.map.set(keys[i]!, values[i]!);
      }
    }
    while (this.map.size > this.max) this.shift();
  }

  /** Oldest first. */
  entries(): IterableIterator<[K, V]> {
    return this.map.entries();
  }

  keys(): IterableIterator<K> {
    return this.map.keys();
  }

  values(): IterableIterator<V> {
    return this.map.values();
  }

  clear(): void {
    this.map.clear();
    this.oldest = undefined;
    this.sinceEviction = 0;
  }
}

/** The same as a set: `add` inserts or refreshes, the oldest beyond `max` go; iterates oldest first. */
export class RecencySet<K> {
  private readonly map: RecencyMap<K, true>;

  constructor(max: number) {
    this.map = new RecencyMap(max);
  }

  get size(): number {
    return this.map.size;
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  /** Insert or refresh; returns the evicted key, if any. */
  add(key: K): K | undefined {
    return this.map.set(key, true)?.[0];
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  [Symbol.iterator](): IterableIterator<K> {
    return this.map.keys();
  }
}
