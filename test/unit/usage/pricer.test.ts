import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { calcPrice, type Usage } from '@pydantic/genai-prices';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPricer, loadPricer, type Cost, type PriceCall, type Pricer, type PriceLibrary } from '../../../src/usage/pricer.js';
import { routeOf } from '../../../src/usage/providers.js';
import { fromHermesUsage, type ModelUsage } from '../../../src/usage/token-usage.js';
import { ROOT } from '../../support/paths.js';

/**
 * The arithmetic pinned against the bundled database (@pydantic/genai-prices
 * 0.1.8, as the lock file has it). Each expected number is worked out by hand
 * from the model's per-million prices in that database, written next to it;
 * a database update that changes one of these prices fails here, on purpose.
 */
const AT = new Date('2026-05-01T20:00:00Z');

const usage = (b: { input: number; read?: number; write?: number; output: number; reasoning?: number }): ModelUsage =>
  fromHermesUsage({
    input_tokens: b.input,
    cache_read_tokens: b.read ?? 0,
    cache_write_tokens: b.write ?? 0,
    output_tokens: b.output,
    reasoning_tokens: b.reasoning ?? 0,
    request_count: 1,
  })!;

/** genai-prices' own answer for the same call, rounded as the pricer rounds */
function library(u: Usage, model: string, providerId: string | undefined, at = AT): Cost {
  const r = calcPrice(u, model, { ...(providerId ? { providerId } : {}), timestamp: at });
  if (!r) throw new Error(`genai-prices has no price for ${model}`);
  const round = (x: number) => Math.round(x * 1e9) / 1e9;
  return { currency: 'USD', total: round(r.total_price), prompt: round(r.input_price), completion: round(r.output_price) };
}

let pricer: Pricer;
beforeAll(async () => {
  pricer = await loadPricer();
});

describe('three known models, hand-checked and equal to calcPrice', () => {
  it('OpenAI gpt-4o with cache reads: input $2.50, cache read $1.25, output $10 per million', () => {
    // Hermes: 8,000 uncached + 2,000 cache-read input, 500 output
    const u = usage({ input: 8000, read: 2000, output: 500 });
    const cost = pricer.price({ provider: 'openai', model: 'gpt-4o', responseModel: 'gpt-4o-2024-08-06', usage: u, at: AT });
    // prompt = 8000 x 2.5e-6 + 2000 x 1.25e-6 = 0.02 + 0.0025; completion = 500 x 10e-6
    expect(cost).toEqual({ currency: 'USD', total: 0.0275, prompt: 0.0225, completion: 0.005 });
    expect(cost).toEqual(library({ input_tokens: 10_000, cache_read_tokens: 2000, output_tokens: 500 }, 'gpt-4o-2024-08-06', 'openai'));
  });

  it('Anthropic claude-sonnet-4-5 with cache read and write: $3 / $0.30 / $3.75 in, $15 out per million (under 200k input)', () => {
    const u = usage({ input: 1200, read: 30_000, write: 4000, output: 800 });
    const cost = pricer.price({ provider: 'anthropic', model: 'claude-sonnet-4-5', responseModel: 'claude-sonnet-4-5-20250929', usage: u, at: AT });
    // prompt = 1200 x 3e-6 + 30000 x 0.3e-6 + 4000 x 3.75e-6 = 0.0036 + 0.009 + 0.015 = 0.0276; completion = 800 x 15e-6 = 0.012
    expect(cost).toEqual({ currency: 'USD', total: 0.0396, prompt: 0.0276, completion: 0.012 });
    expect(cost).toEqual(
      library({ input_tokens: 35_200, cache_read_tokens: 30_000, cache_write_tokens: 4000, output_tokens: 800 }, 'claude-sonnet-4-5-20250929', 'anthropic'),
    );
  });

  it('Anthropic past 200k input: the tier is chosen on the WHOLE input (cache included), so the cache buckets must be in it', () => {
    // 1,200 uncached alone is far under the 200k tier; with 250,000 cache-read tokens the input is 255,200
    const u = usage({ input: 1200, read: 250_000, write: 4000, output: 800 });
    const cost = pricer.price({ provider: 'anthropic', model: 'claude-sonnet-4-5', usage: u, at: AT });
    // tier prices $6 / $0.60 / $7.50 in, $22.50 out: 1200 x 6e-6 + 250000 x 0.6e-6 + 4000 x 7.5e-6 = 0.0072 + 0.15 + 0.03; 800 x 22.5e-6
    expect(cost).toEqual({ currency: 'USD', total: 0.2052, prompt: 0.1872, completion: 0.018 });
  });

  it('OpenRouter google/gemini-2.5-flash with cache reads and reasoning: $0.30 / $0.075 in, $2.50 out per million', () => {
    const u = usage({ input: 4000, read: 1000, output: 2000, reasoning: 1500 });
    const cost = pricer.price({ provider: 'openrouter', model: 'google/gemini-2.5-flash', usage: u, at: AT });
    // prompt = 4000 x 0.3e-6 + 1000 x 0.075e-6 = 0.0012 + 0.000075; completion = 2000 x 2.5e-6 (reasoning is part of the output)
    expect(cost).toEqual({ currency: 'USD', total: 0.006275, prompt: 0.001275, completion: 0.005 });
    expect(cost).toEqual(
      library({ input_tokens: 5000, cache_read_tokens: 1000, output_tokens: 2000, output_reasoning_tokens: 1500 }, 'google/gemini-2.5-flash', 'openrouter'),
    );
  });

  it('the call time picks a time-conditional price deterministically (DeepSeek peak hours, 00:30-16:30 UTC)', () => {
    const u = usage({ input: 1_000_000, output: 1_000_000 });
    const at = (iso: string) => pricer.price({ provider: 'deepseek', model: 'deepseek-chat', usage: u, at: new Date(iso) });
    // off-peak $0.135 + $0.55, peak $0.27 + $1.10 per million
    expect(at('2026-05-01T20:00:00Z')).toEqual({ currency: 'USD', total: 0.685, prompt: 0.135, completion: 0.55 });
    expect(at('2026-05-01T10:00:00Z')).toEqual({ currency: 'USD', total: 1.37, prompt: 0.27, completion: 1.1 });
  });
});

describe('no cost, never a guess', () => {
  it('an unknown model: undefined, counted unpriced_unknown_model', async () => {
    const p = await loadPricer();
    expect(p.price({ provider: 'openai', model: 'gpt-nonexistent-9', usage: usage({ input: 10, output: 10 }), at: AT })).toBeUndefined();
    // a known provider is never priced from another provider's list
    expect(p.price({ provider: 'anthropic', model: 'gpt-4o', usage: usage({ input: 10, output: 10 }), at: AT })).toBeUndefined();
    expect(p.price({ provider: 'openai', usage: usage({ input: 10, output: 10 }), at: AT })).toBeUndefined();
    expect(p.stats()).toMatchObject({ ready: true, priced: 0, unpriced: 3, unpriced_unknown_model: 3 });
  });

  it('the response model first, then the requested one when the database does not know the response’s name', async () => {
    const p = await loadPricer();
    const u = usage({ input: 1000, output: 100 });
    const byResponse = p.price({ provider: 'openai', model: 'gpt-4o', responseModel: 'gpt-4o-mini', usage: u, at: AT });
    expect(byResponse).toEqual(p.price({ provider: 'openai', model: 'gpt-4o-mini', usage: u, at: AT }));
    expect(byResponse).not.toEqual(p.price({ provider: 'openai', model: 'gpt-4o', usage: u, at: AT }));
    expect(p.price({ provider: 'openai', model: 'gpt-4o', responseModel: 'gpt-4o-next-unreleased', usage: u, at: AT })).toEqual(
      p.price({ provider: 'openai', model: 'gpt-4o', usage: u, at: AT }),
    );
  });

  it('subscriptions and local servers are unmetered (no database price); other names match by base URL, then by model name', async () => {
    const p = await loadPricer();
    const u = usage({ input: 1000, output: 100 });
    const call = (c: Omit<PriceCall, 'usage' | 'at'>) => p.price({ ...c, usage: u, at: AT });
    // the ChatGPT subscription, though genai-prices' own lookup would take `openai-codex` for `openai`
    expect(call({ provider: 'openai-codex', model: 'gpt-5', baseUrl: 'https://chatgpt.com/backend-api/codex' })).toBeUndefined();
    // a local distill shares its name with DeepSeek's paid R1
    expect(call({ provider: 'custom', model: 'deepseek-r1:14b', baseUrl: 'http://127.0.0.1:11434/v1' })).toBeUndefined();
    expect(call({ provider: 'lmstudio', model: 'gpt-oss-20b' })).toBeUndefined();
    expect(call({ provider: 'kimi-coding', model: 'kimi-k2', baseUrl: 'https://api.kimi.com/coding/v1' })).toBeUndefined();
    expect(p.stats().unpriced_unmetered).toBe(4);
    // `custom` pointed at DeepSeek's API is DeepSeek
    expect(call({ provider: 'custom', model: 'deepseek-chat', baseUrl: 'https://api.deepseek.com/v1' })).toEqual(
      library({ input_tokens: 1000, output_tokens: 100 }, 'deepseek-chat', 'deepseek'),
    );
    // an unknown provider with an unknown host: the model name alone
    expect(call({ provider: 'nous', model: 'claude-sonnet-4-5', baseUrl: 'https://inference-api.nousresearch.com/v1' })).toEqual(
      library({ input_tokens: 1000, output_tokens: 100 }, 'claude-sonnet-4-5', undefined),
    );
    expect(call({ provider: 'kimi-coding', model: 'kimi-k2', baseUrl: 'https://api.moonshot.ai/v1' })).toEqual(
      library({ input_tokens: 1000, output_tokens: 100 }, 'kimi-k2', 'moonshotai'),
    );
    expect(call({ provider: 'custom', model: 'my-own-finetune' })).toBeUndefined();
    expect(p.stats()).toMatchObject({ priced: 3, unpriced_unknown_model: 1 });
  });

  it('no usable counts, an invalid time, inconsistent counts: undefined, counted; price() never throws', async () => {
    const p = await loadPricer();
    expect(p.price({ provider: 'openai', model: 'gpt-4o', usage: {}, at: AT })).toBeUndefined();
    expect(p.price({ provider: 'openai', model: 'gpt-4o', usage: { 'gen_ai.usage.output_tokens': 5 }, at: AT })).toBeUndefined();
    expect(p.price({ provider: 'openai', model: 'gpt-4o', usage: usage({ input: 1, output: 1 }), at: new Date(Number.NaN) })).toBeUndefined();
    // more cached than the whole input: genai-prices refuses it
    const bad: ModelUsage = { 'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.output_tokens': 1, 'gen_ai.usage.cache_read.input_tokens': 50 };
    expect(p.price({ provider: 'openai', model: 'gpt-4o', usage: bad, at: AT })).toBeUndefined();
    expect(() => p.price(null as unknown as PriceCall)).not.toThrow();
    expect(p.stats()).toMatchObject({ priced: 0, unpriced: 5, unpriced_no_usage: 2, unpriced_error: 3 });
  });
});

describe('loading in the background', () => {
  it('before load() resolves, price() answers undefined and counts unpriced_not_loaded; after, it prices', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const p = createPricer({
      importLibrary: async () => {
        await gate;
        return import('@pydantic/genai-prices');
      },
    });
    const call: PriceCall = { provider: 'openai', model: 'gpt-4o', usage: usage({ input: 1000, output: 100 }), at: AT };
    expect(p.ready).toBe(false);
    expect(p.price(call)).toBeUndefined();
    const loading = p.load();
    expect(p.price(call)).toBeUndefined();
    expect(p.stats()).toMatchObject({ ready: false, priced: 0, unpriced: 2, unpriced_not_loaded: 2 });
    release();
    expect(await loading).toBe(p);
    expect(p.load()).toBe(loading);
    expect(p.price(call)).toEqual({ currency: 'USD', total: 0.0035, prompt: 0.0025, completion: 0.001 });
    expect(p.stats()).toMatchObject({ ready: true, priced: 1, unpriced_not_loaded: 2 });
  });

  it('a failed load is reported in stats and may be retried', async () => {
    let fail = true;
    const p = createPricer({
      importLibrary: async (): Promise<PriceLibrary> => {
        if (fail) throw new Error('Cannot find package');
        return import('@pydantic/genai-prices');
      },
    });
    await expect(p.load()).rejects.toThrow('Cannot find package');
    expect(p.stats()).toMatchObject({ ready: false, load_error: 'Cannot find package' });
    fail = false;
    await p.load();
    expect(p.stats().ready).toBe(true);
    expect(p.stats().load_error).toBeUndefined();
  });

  it('genai-prices is never imported statically by src/ (its 830 KB stay off the start path), and nothing asks it for network updates', () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const f = path.join(dir, e.name);
        if (e.isDirectory()) walk(f);
        else if (f.endsWith('.ts')) files.push(f);
      }
    };
    walk(path.join(ROOT, 'src'));
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      for (const line of text.split('\n').filter((l) => /from '@pydantic\/genai-prices'/.test(l))) {
        expect(line, path.relative(ROOT, f)).toMatch(/^import type /);
      }
      expect(text, path.relative(ROOT, f)).not.toMatch(/\b(updatePrices|enableAutoUpdate|waitForUpdate)\b/);
    }
    expect(readFileSync(path.join(ROOT, 'src/usage/pricer.ts'), 'utf8')).toContain("import('@pydantic/genai-prices')");
  });
});

describe('properties', () => {
  const CALLS: [provider: string, model: string][] = [
    ['openai', 'gpt-4o'],
    ['anthropic', 'claude-sonnet-4-5'],
    ['openrouter', 'google/gemini-2.5-flash'],
    ['gemini', 'gemini-2.5-pro'],
    ['deepseek', 'deepseek-chat'],
  ];
  const buckets = fc.record({
    input: fc.nat({ max: 2_000_000 }),
    read: fc.nat({ max: 2_000_000 }),
    write: fc.nat({ max: 2_000_000 }),
    output: fc.nat({ max: 2_000_000 }),
    reasoning: fc.nat({ max: 2_000_000 }),
  });
  const when = fc.date({ min: new Date('2025-01-01T00:00:00Z'), max: new Date('2027-12-31T00:00:00Z'), noInvalidDate: true });

  it('a known model is always priced, never negative, the breakdown no more than the total', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CALLS), buckets, when, ([provider, model], b, at) => {
        const cost = pricer.price({ provider, model, usage: usage(b), at });
        expect(cost).toBeDefined();
        const { total, prompt, completion } = cost!;
        for (const v of [total, prompt!, completion!]) expect(Number.isFinite(v) && v >= 0).toBe(true);
        expect(prompt! + completion!).toBeLessThanOrEqual(total + 2e-9);
      }),
      { numRuns: 300 },
    );
  });

  it('monotone: more tokens in any bucket never cost less', () => {
    const bucket = fc.constantFrom('input', 'read', 'write', 'output', 'reasoning');
    fc.assert(
      fc.property(fc.constantFrom(...CALLS), buckets, bucket, fc.nat({ max: 500_000 }), when, ([provider, model], b, k, more, at) => {
        const before = pricer.price({ provider, model, usage: usage(b), at })!;
        const after = pricer.price({ provider, model, usage: usage({ ...b, [k]: b[k] + more }), at })!;
        expect(after.total).toBeGreaterThanOrEqual(before.total);
      }),
      { numRuns: 300 },
    );
  });
});

describe('routeOf (the provider table)', () => {
  it.each([
    ['anthropic', undefined, { kind: 'provider', providerId: 'anthropic' }],
    ['OpenRouter ', undefined, { kind: 'provider', providerId: 'openrouter' }],
    ['gemini', 'https://generativelanguage.googleapis.com/v1beta', { kind: 'provider', providerId: 'google' }],
    ['bedrock', undefined, { kind: 'provider', providerId: 'aws' }],
    ['copilot', 'https://api.githubcopilot.com', { kind: 'provider', providerId: 'github-copilot' }],
    ['openai-codex', undefined, { kind: 'unmetered' }],
    ['xai-oauth', 'https://api.x.ai/v1', { kind: 'unmetered' }],
    ['anthropic', 'http://localhost:4000', { kind: 'unmetered' }],
    ['custom', 'http://[::1]:8080/v1', { kind: 'unmetered' }],
    ['zai', 'https://api.z.ai/api/coding/paas/v4', { kind: 'unmetered' }],
    ['zai', 'https://api.z.ai/api/paas/v4', { kind: 'provider', providerId: 'zai' }],
    ['custom', 'https://api.deepseek.com/v1', { kind: 'url', url: 'https://api.deepseek.com/v1' }],
    ['custom', 'not a url', { kind: 'model-name' }],
    ['constructor', undefined, { kind: 'model-name' }],
    [undefined, undefined, { kind: 'model-name' }],
  ] as const)('%s at %s', (provider, baseUrl, route) => {
    expect(routeOf(provider, baseUrl)).toEqual(route);
  });
});
