import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { calcPrice, type Provider } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/read-env.js';
import { readSettings } from '../../../src/daemon/settings.js';
import { parsePriceFile, readPriceFile } from '../../../src/usage/price-file.js';
import { loadPricer, type PriceCall } from '../../../src/usage/pricer.js';
import { fromHermesUsage } from '../../../src/usage/token-usage.js';
import { ROOT } from '../../support/paths.js';

const EXAMPLE = path.join(ROOT, 'fixtures/prices/example.json');
const AT = new Date('2026-05-01T20:00:00Z');
const dir = mkdtempSync(path.join(os.tmpdir(), 'aep-prices-'));
let n = 0;
function file(content: string): string {
  const f = path.join(dir, `prices-${++n}.json`);
  writeFileSync(f, content);
  return f;
}
const usage = (input: number, read: number, write: number, output: number) =>
  fromHermesUsage({ input_tokens: input, cache_read_tokens: read, cache_write_tokens: write, output_tokens: output, reasoning_tokens: 0 })!;

describe('AEP_PRICES_FILE: prices that win over the bundled database', () => {
  it('is read with the daemon settings (the README example file)', () => {
    const settings = readSettings({ AEP_PRICES_FILE: EXAMPLE });
    expect(settings.config.pricesFile).toBe(EXAMPLE);
    expect(settings.prices?.file).toBe(EXAMPLE);
    expect(settings.prices?.entries.map((e) => [e.provider, e.model])).toEqual([
      ['anthropic', 'claude-sonnet-4-5'],
      ['custom', 'my-local-llm'],
      ['openai-codex', '*'],
    ]);
    expect(readSettings({}).prices).toBeUndefined();
  });

  it('overrides a known model: the file’s rates, in genai-prices’ arithmetic, even when the database knows the response model', async () => {
    const overrides = readPriceFile(EXAMPLE);
    const pricer = await loadPricer({ overrides });
    const call: PriceCall = {
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      responseModel: 'claude-sonnet-4-5-20250929',
      usage: usage(1200, 30_000, 4000, 800),
      at: AT,
    };
    const cost = pricer.price(call);
    // 1200 x 2.4e-6 + 30000 x 0.24e-6 + 4000 x 3e-6 = 0.00288 + 0.0072 + 0.012 = 0.02208; 800 x 12e-6 = 0.0096
    expect(cost).toEqual({ currency: 'USD', total: 0.03168, prompt: 0.02208, completion: 0.0096 });
    const entry: Provider = {
      id: 'file',
      name: 'file',
      api_pattern: '(?!)',
      models: [{ id: 'm', match: { equals: 'claude-sonnet-4-5' }, prices: { ...overrides.entries[0]!.prices } }],
    };
    const direct = calcPrice({ input_tokens: 35_200, cache_read_tokens: 30_000, cache_write_tokens: 4000, output_tokens: 800 }, 'claude-sonnet-4-5', {
      provider: entry,
      timestamp: AT,
    })!;
    expect(cost!.total).toBe(Math.round(direct.total_price * 1e9) / 1e9);
    // without the file: the list price ($3 / $0.30 / $3.75 / $15)
    expect((await loadPricer()).price(call)?.total).toBe(0.0396);
    // only for the provider the entry names
    expect(pricer.price({ ...call, provider: 'openrouter', model: 'anthropic/claude-sonnet-4.5', responseModel: undefined })?.total).toBe(0.0396);
    expect(pricer.stats()).toMatchObject({ priced: 2, priced_override: 1, overrides: 3 });
  });

  it('adds a local model at zero, and `*` prices every model of a subscription at zero', async () => {
    const pricer = await loadPricer({ overrides: readPriceFile(EXAMPLE) });
    const u = usage(5000, 0, 0, 700);
    expect(pricer.price({ provider: 'custom', model: 'my-local-llm', baseUrl: 'http://localhost:8080/v1', usage: u, at: AT })).toEqual({
      currency: 'USD',
      total: 0,
      prompt: 0,
      completion: 0,
    });
    expect(pricer.price({ provider: 'openai-codex', model: 'gpt-5-codex', usage: u, at: AT })?.total).toBe(0);
    // another local model has no entry: unmetered, no cost
    expect(pricer.price({ provider: 'custom', model: 'qwen3:8b', baseUrl: 'http://localhost:8080/v1', usage: u, at: AT })).toBeUndefined();
    expect(pricer.stats()).toMatchObject({ priced: 2, priced_override: 2, unpriced_unmetered: 1 });
  });

  it('precedence: the provider’s exact model, then its `*`, then an entry without a provider; names match case-insensitively', async () => {
    const overrides = parsePriceFile(
      JSON.stringify({
        models: [
          { model: 'GPT-4o', input_mtok: 1, output_mtok: 1 },
          { provider: 'openrouter', model: '*', input_mtok: 2, output_mtok: 2 },
          { provider: 'OpenRouter', model: 'openai/gpt-4o', input_mtok: 3, output_mtok: 3 },
        ],
      }),
    );
    const pricer = await loadPricer({ overrides });
    const u = usage(1_000_000, 0, 0, 0);
    const total = (provider: string, model: string) => pricer.price({ provider, model, usage: u, at: AT })?.total;
    expect(total('openrouter', 'openai/gpt-4o')).toBe(3);
    expect(total('openrouter', 'gpt-4o')).toBe(2);
    expect(total('openai', 'gpt-4o')).toBe(1);
    expect(total('azure-foundry', 'gpt-4o')).toBe(1);
    // cache reads without a cache price are input tokens at input_mtok (genai-prices' rule)
    expect(pricer.price({ provider: 'openai', model: 'gpt-4o', usage: usage(0, 1_000_000, 0, 0), at: AT })?.total).toBe(1);
  });

  it('requests_kcount: a fee per thousand calls, in the total only', async () => {
    const pricer = await loadPricer({
      overrides: parsePriceFile(
        JSON.stringify({ models: [{ provider: 'custom', model: 'gateway-model', input_mtok: 1, output_mtok: 2, requests_kcount: 5 }] }),
      ),
    });
    expect(pricer.price({ provider: 'custom', model: 'gateway-model', usage: usage(1000, 0, 0, 1000), at: AT })).toEqual({
      currency: 'USD',
      total: 0.008,
      prompt: 0.001,
      completion: 0.002,
    });
  });
});

describe('a bad price file stops the start with one line naming AEP_PRICES_FILE and the bad field', () => {
  const entry = { provider: 'custom', model: 'm', input_mtok: 1, output_mtok: 1 };
  const cases: [what: string, content: string, rule: string][] = [
    ['not JSON', '{"models": [', 'not valid JSON'],
    ['not an object', '[]', 'a JSON object {"models": [...]}'],
    ['no models', '{}', 'models: a list of entries'],
    ['an entry not an object', '{"models": [3]}', 'models[0]: an object'],
    ['a price missing', JSON.stringify({ models: [entry, { model: 'x', input_mtok: 1 }] }), 'models[1].output_mtok: required: USD per million output tokens'],
    ['a negative price', JSON.stringify({ models: [{ ...entry, input_mtok: -0.5 }] }), 'models[0].input_mtok: a number of 0 or more'],
    ['a price as text', JSON.stringify({ models: [{ ...entry, cache_read_mtok: '0.3' }] }), 'models[0].cache_read_mtok: a number of 0 or more'],
    ['a misspelt field', JSON.stringify({ models: [{ ...entry, cache_reads_mtok: 0.3 }] }), 'models[0]: unknown field "cache_reads_mtok"'],
    ['an unknown top-level field', JSON.stringify({ models: [], prices: [] }), 'unknown field "prices"'],
    ['an empty model', JSON.stringify({ models: [{ ...entry, model: ' ' }] }), 'models[0].model: a non-empty string'],
    ['a provider that is not a string', JSON.stringify({ models: [{ ...entry, provider: 7 }] }), 'models[0].provider: a non-empty string'],
    ['* without a provider', JSON.stringify({ models: [{ model: '*', input_mtok: 0, output_mtok: 0 }] }), 'models[0].model: "*" needs a provider'],
    [
      'the same model twice',
      JSON.stringify({ models: [entry, { ...entry, model: 'M', provider: 'Custom' }] }),
      'models[1]: the same provider and model as models[0]',
    ],
  ];

  it.each(cases)('%s', (_what, content, rule) => {
    let err: unknown;
    try {
      readSettings({ AEP_PRICES_FILE: file(content) });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const e = err as ConfigError;
    expect(e.variables).toEqual(['AEP_PRICES_FILE']);
    expect(e.problems[0]!.rule).toContain(rule);
    expect(e.message).toContain(`AEP_PRICES_FILE: ${rule}`);
    expect(e.message).not.toContain('\n');
  });

  it('a path that is relative, missing, or not a file', () => {
    const rule = (value: string) => {
      try {
        readSettings({ AEP_PRICES_FILE: value });
      } catch (e) {
        expect((e as ConfigError).variables).toEqual(['AEP_PRICES_FILE']);
        return (e as ConfigError).problems[0]!.rule;
      }
      throw new Error('accepted');
    };
    expect(rule('prices.json')).toContain('an absolute path');
    expect(rule(path.join(dir, 'missing.json'))).toBe('cannot be read (ENOENT): an absolute path to a JSON price file');
    const sub = path.join(dir, 'a-dir');
    mkdirSync(sub);
    expect(rule(sub)).toContain('not a regular file');
    expect(rule(file(' '.repeat(1024 * 1024 + 1)))).toContain('larger than 1048576 bytes');
  });

  it('is reported together with the other bad settings', () => {
    try {
      readSettings({ AEP_PRICES_FILE: file('nope'), OTEL_TRACES_EXPORTER: 'zipkin' });
      expect.unreachable();
    } catch (e) {
      expect((e as ConfigError).variables.sort()).toEqual(['AEP_PRICES_FILE', 'OTEL_TRACES_EXPORTER']);
    }
  });
});
