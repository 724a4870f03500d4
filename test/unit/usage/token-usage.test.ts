import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addUsage, fromHermesUsage, USAGE_KEYS, type ModelUsage } from '../../../src/usage/token-usage.js';

/** a `post_api_request` usage as Hermes 0.18.2 sends it (CanonicalUsage, asdict, plus its two totals) */
const hermes = (b: { input: number; read?: number; write?: number; output: number; reasoning?: number }) => ({
  input_tokens: b.input,
  output_tokens: b.output,
  cache_read_tokens: b.read ?? 0,
  cache_write_tokens: b.write ?? 0,
  reasoning_tokens: b.reasoning ?? 0,
  request_count: 1,
  prompt_tokens: b.input + (b.read ?? 0) + (b.write ?? 0),
  total_tokens: b.input + (b.read ?? 0) + (b.write ?? 0) + b.output,
});

describe('fromHermesUsage', () => {
  it('maps the buckets to the GenAI names; the input is the whole, cache read and write included', () => {
    expect(fromHermesUsage(hermes({ input: 1200, read: 30_000, write: 4000, output: 800, reasoning: 300 }))).toEqual({
      'gen_ai.usage.input_tokens': 35_200,
      'gen_ai.usage.output_tokens': 800,
      'gen_ai.usage.cache_read.input_tokens': 30_000,
      'gen_ai.usage.cache_creation.input_tokens': 4000,
      'gen_ai.usage.reasoning.output_tokens': 300,
    });
  });

  it('keeps a reported 0 (a fact), and drops request_count and the totals (no member for them)', () => {
    const u = fromHermesUsage(hermes({ input: 10, output: 0 }));
    expect(u).toEqual({
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 0,
      'gen_ai.usage.cache_read.input_tokens': 0,
      'gen_ai.usage.cache_creation.input_tokens': 0,
      'gen_ai.usage.reasoning.output_tokens': 0,
    });
    expect(Object.keys(u!).sort()).toEqual([...USAGE_KEYS].sort());
  });

  it('leaves out every value that is not a non-negative safe integer', () => {
    const u = fromHermesUsage({
      input_tokens: 100,
      output_tokens: '50',
      cache_read_tokens: -1,
      cache_write_tokens: 1.5,
      reasoning_tokens: Number.MAX_SAFE_INTEGER + 1,
    });
    // the unusable cache buckets add nothing to the input
    expect(u).toEqual({ 'gen_ai.usage.input_tokens': 100 });
    expect(fromHermesUsage({ input_tokens: Number.NaN, output_tokens: Infinity, reasoning_tokens: null })).toBeUndefined();
    expect(fromHermesUsage({ output_tokens: -0 })).toEqual({ 'gen_ai.usage.output_tokens': 0 });
    expect(Object.is(fromHermesUsage({ output_tokens: -0 })!['gen_ai.usage.output_tokens'], 0)).toBe(true);
  });

  it('an input total that is not a safe integer is absent, the buckets kept', () => {
    const big = Number.MAX_SAFE_INTEGER - 1;
    expect(fromHermesUsage({ input_tokens: big, cache_read_tokens: 5, output_tokens: 1 })).toEqual({
      'gen_ai.usage.output_tokens': 1,
      'gen_ai.usage.cache_read.input_tokens': 5,
    });
  });

  it('without a usable input_tokens, Hermes’s prompt_tokens total stands in (when it covers the cache buckets)', () => {
    expect(fromHermesUsage({ input_tokens: 'x', prompt_tokens: 900, cache_read_tokens: 800, output_tokens: 3 })).toEqual({
      'gen_ai.usage.input_tokens': 900,
      'gen_ai.usage.output_tokens': 3,
      'gen_ai.usage.cache_read.input_tokens': 800,
    });
    expect(fromHermesUsage({ prompt_tokens: 100, cache_read_tokens: 800 })).toEqual({ 'gen_ai.usage.cache_read.input_tokens': 800 });
  });

  it('is undefined when nothing is usable', () => {
    for (const raw of [undefined, null, 42, 'usage', [], [1, 2], {}, { total_tokens: 5, request_count: 1 }, { input_tokens: {} }]) {
      expect(fromHermesUsage(raw)).toBeUndefined();
    }
  });

  it('property: whatever the input, every member is a non-negative safe integer, and the input is the sum of the buckets', () => {
    const value = fc.oneof(
      fc.nat({ max: 10_000_000 }),
      fc.integer(),
      fc.double(),
      fc.string(),
      fc.constant(null),
      fc.constant(undefined),
      fc.constant(Number.MAX_SAFE_INTEGER),
    );
    const raw = fc.record(
      { input_tokens: value, output_tokens: value, cache_read_tokens: value, cache_write_tokens: value, reasoning_tokens: value, prompt_tokens: value },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(raw, (r) => {
        const u = fromHermesUsage(r);
        if (u === undefined) return;
        for (const [k, v] of Object.entries(u)) {
          expect(USAGE_KEYS).toContain(k);
          expect(Number.isSafeInteger(v) && v >= 0).toBe(true);
        }
        const ok = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
        const input = u['gen_ai.usage.input_tokens'];
        if (ok(r.input_tokens) && input !== undefined) {
          expect(input).toBe(r.input_tokens + (ok(r.cache_read_tokens) ? r.cache_read_tokens : 0) + (ok(r.cache_write_tokens) ? r.cache_write_tokens : 0));
        }
        if (input !== undefined) {
          expect(input).toBeGreaterThanOrEqual((u['gen_ai.usage.cache_read.input_tokens'] ?? 0) + (u['gen_ai.usage.cache_creation.input_tokens'] ?? 0));
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('addUsage', () => {
  const a: ModelUsage = { 'gen_ai.usage.input_tokens': 100, 'gen_ai.usage.output_tokens': 10, 'gen_ai.usage.cache_read.input_tokens': 40 };
  const b: ModelUsage = { 'gen_ai.usage.input_tokens': 5, 'gen_ai.usage.output_tokens': 1, 'gen_ai.usage.reasoning.output_tokens': 1 };

  it('sums member by member; a member one side lacks counts as 0, one both lack stays absent', () => {
    expect(addUsage(a, b)).toEqual({
      'gen_ai.usage.input_tokens': 105,
      'gen_ai.usage.output_tokens': 11,
      'gen_ai.usage.cache_read.input_tokens': 40,
      'gen_ai.usage.reasoning.output_tokens': 1,
    });
  });

  it('undefined is nothing reported yet', () => {
    expect(addUsage(undefined, undefined)).toBeUndefined();
    expect(addUsage(a, undefined)).toEqual(a);
    expect(addUsage(undefined, b)).toEqual(b);
  });

  it('a sum past the safe-integer range is absent, never an inexact count', () => {
    expect(addUsage({ 'gen_ai.usage.input_tokens': Number.MAX_SAFE_INTEGER, 'gen_ai.usage.output_tokens': 1 }, { 'gen_ai.usage.input_tokens': 1 })).toEqual({
      'gen_ai.usage.output_tokens': 1,
    });
  });

  it('property: commutative, associative, and it equals mapping the summed Hermes buckets', () => {
    const buckets = fc.record({
      input: fc.nat({ max: 1e9 }),
      read: fc.nat({ max: 1e9 }),
      write: fc.nat({ max: 1e9 }),
      output: fc.nat({ max: 1e9 }),
      reasoning: fc.nat({ max: 1e9 }),
    });
    fc.assert(
      fc.property(buckets, buckets, buckets, (x, y, z) => {
        const [ux, uy, uz] = [x, y, z].map((h) => fromHermesUsage(hermes(h)));
        expect(addUsage(ux, uy)).toEqual(addUsage(uy, ux));
        expect(addUsage(addUsage(ux, uy), uz)).toEqual(addUsage(ux, addUsage(uy, uz)));
        const summed = hermes({
          input: x.input + y.input,
          read: x.read + y.read,
          write: x.write + y.write,
          output: x.output + y.output,
          reasoning: x.reasoning + y.reasoning,
        });
        expect(addUsage(ux, uy)).toEqual(fromHermesUsage(summed));
      }),
      { numRuns: 300 },
    );
  });
});
