import type * as GenaiPrices from '@pydantic/genai-prices';
import type { Provider, Usage } from '@pydantic/genai-prices';
import { ANY_MODEL, type PriceOverride, type PriceOverrides } from './price-file.js';
import { normalizeProvider, routeOf } from './providers.js';
import { CACHE_CREATION_TOKENS, CACHE_READ_TOKENS, INPUT_TOKENS, OUTPUT_TOKENS, REASONING_TOKENS, type ModelUsage } from './token-usage.js';

/**
 * The cost of one model call, AEP-0002 §5.2's `cost` object: `total` is the
 * whole; `prompt` and `completion` are genai-prices' input price (uncached,
 * cache-read and cache-write input together) and output price. They need not
 * sum to `total` (a per-request fee is in neither).
 *
 * Amounts are rounded to 1e-9 USD (a nano-dollar): below a tenth of the price
 * of one token of the cheapest metered model, so no real charge rounds away,
 * while the binary-float residue of the per-million arithmetic
 * (0.0045000000000000005) does.
 */
export interface Cost {
  readonly currency: 'USD';
  readonly total: number;
  readonly prompt?: number;
  readonly completion?: number;
}

export interface PriceCall {
  /** Hermes's provider name (`post_api_request` `provider`) */
  readonly provider?: string;
  /** the model Hermes asked for (`model`) */
  readonly model?: string;
  /** the model the API says answered (`response_model`) */
  readonly responseModel?: string;
  /** the endpoint (`base_url`): tells a local server, a coding plan, or a `custom` provider's real host */
  readonly baseUrl?: string;
  readonly usage: ModelUsage;
  /** when the call was made: time-conditional prices (a date a price starts, peak hours) are read at this instant */
  readonly at: Date;
}

/** why a call got no cost */
export type UnpricedReason = 'not_loaded' | 'no_usage' | 'unmetered' | 'unknown_model' | 'error';

/** Counters for `/healthz`: every `price()` call counts once, as priced or under one unpriced reason. */
export interface PricerStats {
  /** the price database is loaded (before that every call is `unpriced_not_loaded`) */
  readonly ready: boolean;
  readonly priced: number;
  /** of `priced`: by an `AEP_PRICES_FILE` entry */
  readonly priced_override: number;
  /** the sum of the reasons below */
  readonly unpriced: number;
  /** the database was still loading (the daemon loads it after it listens) */
  readonly unpriced_not_loaded: number;
  /** no input and output token counts to price */
  readonly unpriced_no_usage: number;
  /** a subscription or a local server, with no price-file entry (providers.ts) */
  readonly unpriced_unmetered: number;
  /** neither the response model nor the requested model is known for the provider */
  readonly unpriced_unknown_model: number;
  /** genai-prices refused the call (inconsistent counts, an invalid time) */
  readonly unpriced_error: number;
  /** entries read from AEP_PRICES_FILE */
  readonly overrides: number;
  /** why the database could not be loaded, if it could not */
  readonly load_error?: string;
}

/** Prices model calls: pure and synchronous, never throws, no I/O. */
export interface Pricer {
  price(call: PriceCall): Cost | undefined;
  stats(): PricerStats;
  readonly ready: boolean;
}

/** A pricer that answers from the start (undefined, counted `unpriced_not_loaded`) and prices once `load()` is done. */
export interface LoadablePricer extends Pricer {
  /** imports the price database (idempotent; a failed load may be retried) */
  load(): Promise<Pricer>;
}

/** the two functions of genai-prices the pricer uses */
export type PriceLibrary = Pick<typeof GenaiPrices, 'calcPrice' | 'findProvider'>;

export interface PricerOptions {
  /** `AEP_PRICES_FILE`, as read at start (price-file.ts) */
  readonly overrides?: PriceOverrides | readonly PriceOverride[];
  /** how the database is imported (tests); default: `import('@pydantic/genai-prices')` */
  readonly importLibrary?: () => Promise<PriceLibrary>;
}

const NANO = 1e9;
const round = (usd: number): number => Math.round(usd * NANO) / NANO;
const importGenaiPrices = async (): Promise<PriceLibrary> => import('@pydantic/genai-prices');

/**
 * genai-prices' usage: its `input_tokens` is the whole input, cached included
 * (as ours); the cache counts are parts of it and the reasoning count part of
 * the output. undefined without both an input and an output count. A
 * reasoning count larger than the output (a provider that reports them
 * disjoint) is left out rather than refused: it only matters for models
 * that price reasoning apart.
 */
function toLibraryUsage(u: ModelUsage): Usage | undefined {
  const input = u[INPUT_TOKENS];
  const output = u[OUTPUT_TOKENS];
  if (input === undefined || output === undefined) return undefined;
  const usage: Usage = { input_tokens: input, output_tokens: output };
  const read = u[CACHE_READ_TOKENS];
  const write = u[CACHE_CREATION_TOKENS];
  const reasoning = u[REASONING_TOKENS];
  if (read) usage.cache_read_tokens = read;
  if (write) usage.cache_write_tokens = write;
  if (reasoning && reasoning <= output) usage.output_reasoning_tokens = reasoning;
  return usage;
}

/** a price-file entry as a genai-prices model (its price keys are genai-prices' own) */
function overrideTable(id: string, entries: readonly PriceOverride[]): Provider {
  return {
    id: `aep-prices-file/${id}`,
    name: 'AEP_PRICES_FILE',
    // never matched by URL: the pricer hands this provider to calcPrice itself
    api_pattern: '(?!)',
    models: entries.map((e) => ({
      id: e.model,
      match: e.model === ANY_MODEL ? { starts_with: '' } : { equals: e.model },
      prices: { ...e.prices },
    })),
  };
}

/**
 * Price-file entries by precedence: for a call to provider P, P's exact
 * models, then P's `*`, then the provider-less exact models.
 */
class Overrides {
  readonly size: number;
  readonly #exact = new Map<string, Provider>();
  readonly #any = new Map<string, Provider>();
  readonly #anyProvider: Provider | undefined;

  constructor(entries: readonly PriceOverride[]) {
    this.size = entries.length;
    const byProvider = new Map<string, PriceOverride[]>();
    for (const e of entries) {
      const key = e.provider === undefined ? '' : `${e.model === ANY_MODEL ? '*' : '='}${e.provider}`;
      byProvider.set(key, [...(byProvider.get(key) ?? []), e]);
    }
    for (const [key, list] of byProvider) {
      if (key === '') continue;
      (key.startsWith('*') ? this.#any : this.#exact).set(key.slice(1), overrideTable(key, list));
    }
    const anyProvider = byProvider.get('');
    this.#anyProvider = anyProvider ? overrideTable('any', anyProvider) : undefined;
  }

  tables(provider: string): Provider[] {
    return [this.#exact.get(provider), this.#any.get(provider), this.#anyProvider].filter((t): t is Provider => t !== undefined);
  }
}

const isEntryList = (o: PriceOverrides | readonly PriceOverride[]): o is readonly PriceOverride[] => Array.isArray(o);

type Counter = 'priced' | 'priced_override' | `unpriced_${UnpricedReason}`;

class ModelPricer implements LoadablePricer {
  readonly #overrides: Overrides;
  readonly #import: () => Promise<PriceLibrary>;
  #lib: PriceLibrary | undefined;
  #loading: Promise<Pricer> | undefined;
  #loadError: string | undefined;
  /** base URL -> whether a genai-prices provider's API pattern matches it (a few endpoints per daemon; bounded anyway) */
  readonly #urlKnown = new Map<string, boolean>();
  readonly #counts: Record<Counter, number> = {
    priced: 0,
    priced_override: 0,
    unpriced_not_loaded: 0,
    unpriced_no_usage: 0,
    unpriced_unmetered: 0,
    unpriced_unknown_model: 0,
    unpriced_error: 0,
  };

  constructor(opts: PricerOptions) {
    const o = opts.overrides;
    this.#overrides = new Overrides(o === undefined ? [] : isEntryList(o) ? o : o.entries);
    this.#import = opts.importLibrary ?? importGenaiPrices;
  }

  get ready(): boolean {
    return this.#lib !== undefined;
  }

  load(): Promise<Pricer> {
    this.#loading ??= this.#import().then(
      (lib) => {
        // one call here, so the first model call does not pay for compiling the pricing code (a few ms)
        try {
          lib.calcPrice({ input_tokens: 1, output_tokens: 1 }, 'gpt-4o', { providerId: 'openai', timestamp: new Date(0) });
        } catch {
          /* only a warm-up */
        }
        this.#lib = { calcPrice: lib.calcPrice, findProvider: lib.findProvider };
        this.#loadError = undefined;
        return this;
      },
      (err: unknown) => {
        this.#loadError = err instanceof Error ? err.message : String(err);
        this.#loading = undefined;
        throw err;
      },
    );
    return this.#loading;
  }

  price(call: PriceCall): Cost | undefined {
    let outcome: Counter;
    let cost: Cost | undefined;
    try {
      [outcome, cost] = this.#price(call);
    } catch {
      [outcome, cost] = ['unpriced_error', undefined];
    }
    this.#counts[outcome] += 1;
    if (outcome === 'priced_override') this.#counts.priced += 1;
    return cost;
  }

  #price(call: PriceCall): [Counter, Cost?] {
    const lib = this.#lib;
    if (!lib) return ['unpriced_not_loaded'];
    const usage = toLibraryUsage(call.usage);
    if (!usage) return ['unpriced_no_usage'];
    const timestamp = call.at;
    if (!(timestamp instanceof Date) || Number.isNaN(timestamp.getTime())) return ['unpriced_error'];
    // the response model first: it names what actually answered (a dated snapshot, OpenRouter's routed model),
    // so it prices what was billed; the requested model when the database does not know the response's name
    const models = [...new Set([call.responseModel, call.model].map((m) => (typeof m === 'string' ? m.trim() : '')).filter((m) => m !== ''))];
    if (models.length === 0) return ['unpriced_unknown_model'];

    for (const provider of this.#overrides.tables(normalizeProvider(call.provider))) {
      for (const model of models) {
        const cost = costOf(lib.calcPrice(usage, model, { provider, timestamp }));
        if (cost) return ['priced_override', cost];
      }
    }

    const route = routeOf(call.provider, call.baseUrl);
    if (route.kind === 'unmetered') return ['unpriced_unmetered'];
    const options =
      route.kind === 'provider'
        ? { providerId: route.providerId }
        : route.kind === 'url' && this.#knownUrl(lib, route.url)
          ? { providerApiUrl: route.url }
          : {};
    for (const model of models) {
      const cost = costOf(lib.calcPrice(usage, model, { ...options, timestamp }));
      if (cost) return ['priced', cost];
    }
    return ['unpriced_unknown_model'];
  }

  #knownUrl(lib: PriceLibrary, url: string): boolean {
    let known = this.#urlKnown.get(url);
    if (known === undefined) {
      known = lib.findProvider({ providerApiUrl: url }) !== undefined;
      if (this.#urlKnown.size >= 256) this.#urlKnown.clear();
      this.#urlKnown.set(url, known);
    }
    return known;
  }

  stats(): PricerStats {
    const c = this.#counts;
    return {
      ready: this.ready,
      priced: c.priced,
      priced_override: c.priced_override,
      unpriced: c.unpriced_not_loaded + c.unpriced_no_usage + c.unpriced_unmetered + c.unpriced_unknown_model + c.unpriced_error,
      unpriced_not_loaded: c.unpriced_not_loaded,
      unpriced_no_usage: c.unpriced_no_usage,
      unpriced_unmetered: c.unpriced_unmetered,
      unpriced_unknown_model: c.unpriced_unknown_model,
      unpriced_error: c.unpriced_error,
      overrides: this.#overrides.size,
      ...(this.#loadError !== undefined ? { load_error: this.#loadError } : {}),
    };
  }
}

/** genai-prices' result as a cost; undefined for no result, or one that is not a finite non-negative amount */
function costOf(r: ReturnType<PriceLibrary['calcPrice']>): Cost | undefined {
  if (!r) return undefined;
  const ok = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n >= 0;
  if (!ok(r.total_price)) return undefined;
  return {
    currency: 'USD',
    total: round(r.total_price),
    ...(ok(r.input_price) ? { prompt: round(r.input_price) } : {}),
    ...(ok(r.output_price) ? { completion: round(r.output_price) } : {}),
  };
}

/**
 * A pricer that is not loaded yet: construct it at start (no import, no
 * I/O), answer model calls with it at once, and `load()` it in the
 * background after the daemon listens. Until the load resolves, `price()`
 * returns undefined and counts `unpriced_not_loaded`.
 */
export function createPricer(opts: PricerOptions = {}): LoadablePricer {
  return new ModelPricer(opts);
}

/** A loaded pricer: imports genai-prices' database (some 830 KB of JavaScript; see the README for its time). */
export async function loadPricer(opts: PricerOptions = {}): Promise<Pricer> {
  return createPricer(opts).load();
}
