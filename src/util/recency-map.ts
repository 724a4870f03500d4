import { LRUCache } from 'lru-cache';

export interface RecencyMapOptions<K, V> {
  /** called with each entry the bound evicts (not for `delete`, `shift` or `clear`), once the `set` that evicted it is done: it may use the map */
  readonly onEvict?: (key: K, value: V) => void;
}

/**
 * A map that keeps its newest `max` keys, on `lru-cache`: `set` inserts or
 * refreshes a key (it moves to the newest end) and evicts the oldest beyond
 * `max`. Reads (`get`, `has`) never refresh (lru-cache's `peek`), so "newest"
 * means most recently SET. Iterates oldest first. Values may not be
 * `undefined` or `null` (lru-cache reads those as a delete).
 *
 * Why not a plain Map: evicting with `map.keys().next()` walks every deleted
 * hole V8 leaves in the Map's table, so a capped map that evicts on each insert
 * slows to seconds per thousand inserts; lru-cache evicts in constant time.
 */
export class RecencyMap<K, V> {
  private readonly cache: LRUCache<K & {}, V & {}>;
  private readonly onEvict: ((key: K, value: V) => void) | undefined;
  /** the entry the last operation evicted (read by `set` and `shift`) */
  private evicted: [K, V] | undefined;

  /** `max` may be Infinity: then nothing is evicted but through `shift` */
  constructor(
    readonly max: number,
    opts: RecencyMapOptions<K, V> = {},
  ) {
    if (!(max >= 1)) throw new RangeError('RecencyMap needs max >= 1');
    this.onEvict = opts.onEvict;
    // only noted here: lru-cache is mid-operation while it disposes, so `onEvict` runs once `set` returns
    const dispose = (value: V & {}, key: K & {}, reason: LRUCache.DisposeReason) => {
      if (reason === 'evict') this.evicted = [key, value];
    };
    // lru-cache wants a finite bound: an unbounded map is one whose every entry weighs 1 of 2^53
    this.cache = Number.isFinite(max)
      ? new LRUCache({ max: Math.floor(max), dispose })
      : new LRUCache({ maxSize: Number.MAX_SAFE_INTEGER, sizeCalculation: () => 1, dispose });
  }

  get size(): number {
    return this.cache.size;
  }

  get(key: K): V | undefined {
    return this.cache.peek(key as K & {});
  }

  has(key: K): boolean {
    return this.cache.has(key as K & {});
  }

  delete(key: K): boolean {
    return this.cache.delete(key as K & {});
  }

  /** Insert or refresh `key` as the newest; returns the evicted key's entry, if one was evicted. */
  set(key: K, value: V): [K, V] | undefined {
    this.evicted = undefined;
    this.cache.set(key as K & {}, value as V & {});
    const out = this.evicted;
    if (out && this.onEvict) this.onEvict(out[0], out[1]);
    return out;
  }

  /** Remove and return the oldest entry. */
  shift(): [K, V] | undefined {
    this.evicted = undefined;
    this.cache.pop();
    return this.evicted;
  }

  /** Fill an empty map from keys and values listed oldest first (a saved state): the same result as `set` for each in order. */
  load(keys: readonly K[], values: readonly V[], only?: (key: K) => boolean): void {
    if (this.cache.size > 0) throw new Error('RecencyMap.load needs an empty map');
    for (let i = 0; i < keys.length; i++) {
      if (!only || only(keys[i]!)) this.cache.set(keys[i]! as K & {}, values[i]! as V & {});
    }
  }

  /** Oldest first. */
  entries(): IterableIterator<[K, V]> {
    // lru-cache types its pairs loosely; they are [key, value]
    return this.cache.rentries() as IterableIterator<[K, V]>;
  }

  keys(): IterableIterator<K> {
    return this.cache.rkeys();
  }

  values(): IterableIterator<V> {
    return this.cache.rvalues() as IterableIterator<V>;
  }

  clear(): void {
    this.cache.clear();
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
