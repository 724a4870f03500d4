import { describe, expect, it } from 'vitest';
import { decodeTime, isValid, monotonicFactory } from 'ulid';
import { bufferedPrng } from '../../../src/util/buffered-prng.js';

describe('bufferedPrng (the daemon’s ulid randomness)', () => {
  it('draws bytes ÷ 256 in [0, 1), refills when the buffer is spent, and does not repeat the buffer', () => {
    const next = bufferedPrng(16);
    const draws = Array.from({ length: 64 }, () => next());
    for (const x of draws) {
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
      expect(Number.isInteger(x * 256)).toBe(true);
    }
    // four refills of 16 bytes: equal buffers would mean no fresh randomness (chance 2^-128 per pair)
    const chunks = [0, 16, 32, 48].map((i) => draws.slice(i, i + 16).join(','));
    expect(new Set(chunks).size).toBe(4);
    // every byte value is reachable: 20,000 draws from a real CSPRNG cover all 256
    const seen = new Set(Array.from({ length: 20_000 }, () => Math.round(next() * 256)));
    expect(seen.size).toBe(256);
  });

  it('gives ulid valid, unique, time-ordered ids across many milliseconds', () => {
    const ulid = monotonicFactory(bufferedPrng());
    const ids = Array.from({ length: 5_000 }, (_, i) => ulid(1_700_000_000_000 + Math.floor(i / 3)));
    expect(ids.every((id) => isValid(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(decodeTime(ids.at(-1)!)).toBe(1_700_000_000_000 + Math.floor(4_999 / 3));
  });
});
