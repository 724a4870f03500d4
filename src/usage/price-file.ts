import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../config/read-env.js';

/** The setting that names the user's price file. */
export const PRICES_FILE_VARIABLE = 'AEP_PRICES_FILE';
/** A price file is a short list written by hand; past this it is refused (not read whole into memory). */
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_ENTRIES = 5_000;
/** `model: "*"`: every model of the entry's provider (a subscription or a local server at zero) */
export const ANY_MODEL = '*';

/**
 * The price file (`AEP_PRICES_FILE`): prices that win over the bundled
 * database, for contract rates, a model it does not know yet, or a local
 * model at zero. One JSON object:
 *
 * ```json
 * {"models": [
 *   {"provider": "custom", "model": "my-local-llm", "input_mtok": 0, "output_mtok": 0},
 *   {"provider": "anthropic", "model": "claude-sonnet-4-5", "input_mtok": 2.4, "output_mtok": 12,
 *    "cache_read_mtok": 0.24, "cache_write_mtok": 3, "note": "2026 contract"}
 * ]}
 * ```
 *
 * - `provider`: Hermes's provider name as its `post_api_request` reports it
 *   (`anthropic`, `openrouter`, `custom`, ...); absent: the entry applies
 *   whatever the provider.
 * - `model`: the model name, matched whole and case-insensitively against the
 *   call's response model, then its requested model; `"*"` (with a
 *   `provider`) is every model of that provider.
 * - prices in USD: `input_mtok` and `output_mtok` per million tokens
 *   (required), `cache_read_mtok` / `cache_write_mtok` per million cached
 *   input tokens (when absent those tokens are priced as `input_mtok`),
 *   `requests_kcount` per thousand calls. The arithmetic is genai-prices'
 *   (these are its price keys), so a file entry is priced exactly as a
 *   database entry with the same rates.
 * - `note`: free text, ignored.
 *
 * Unknown fields are refused (a misspelt price would otherwise be silently
 * free), and so is the same provider and model twice.
 */
export interface PriceOverride {
  /** Hermes's provider name, lower-cased; undefined: any provider */
  readonly provider?: string;
  /** the model name as written, or `*` */
  readonly model: string;
  /** genai-prices price keys (USD per unit the key names) */
  readonly prices: Readonly<Record<'input_mtok' | 'output_mtok', number> & Partial<Record<'cache_read_mtok' | 'cache_write_mtok' | 'requests_kcount', number>>>;
}

export interface PriceOverrides {
  /** the file they were read from (for the start log) */
  readonly file: string;
  readonly entries: readonly PriceOverride[];
}

const usd = (unit: string) =>
  z
    .number({ error: (iss) => (iss.input === undefined ? `required: USD per ${unit}` : `a number of 0 or more (USD per ${unit})`) })
    .min(0, { error: `a number of 0 or more (USD per ${unit})` });
const name = (what: string) =>
  z
    .string({ error: `a non-empty string (${what})` })
    .trim()
    .min(1, { error: `a non-empty string (${what})` });

const ENTRY_FIELDS = ['provider', 'model', 'input_mtok', 'output_mtok', 'cache_read_mtok', 'cache_write_mtok', 'requests_kcount', 'note'] as const;
const entrySchema = z.strictObject(
  {
    provider: name("Hermes's provider name").optional(),
    model: name('the model name, or "*" for every model of the provider'),
    input_mtok: usd('million input tokens'),
    output_mtok: usd('million output tokens'),
    cache_read_mtok: usd('million cache-read input tokens').optional(),
    cache_write_mtok: usd('million cache-write input tokens').optional(),
    requests_kcount: usd('thousand requests').optional(),
    note: z.string({ error: 'a string (ignored)' }).optional(),
  },
  { error: (iss) => (iss.code === 'invalid_type' ? 'an object (one model and its prices)' : undefined) },
);
const fileSchema = z.strictObject(
  {
    models: z.array(entrySchema, { error: 'a list of entries {provider?, model, input_mtok, output_mtok, ...}' }).max(MAX_ENTRIES, {
      error: `at most ${MAX_ENTRIES} entries`,
    }),
  },
  { error: (iss) => (iss.code === 'invalid_type' ? 'a JSON object {"models": [...]}' : undefined) },
);

/** `models[2].input_mtok` */
function where(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
}

function refuse(rule: string): never {
  throw new ConfigError([{ variable: PRICES_FILE_VARIABLE, rule }]);
}

/**
 * A price file's text, checked. Throws a ConfigError naming
 * `AEP_PRICES_FILE` and the first bad field (`models[1].input_mtok: a number
 * of 0 or more ...`); the values themselves are never repeated.
 */
export function parsePriceFile(text: string): PriceOverride[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return refuse('not valid JSON (the format is in the README: Model cost)');
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = where(issue.path);
    const message =
      issue.code === 'unrecognized_keys'
        ? `unknown field ${issue.keys.map((k) => JSON.stringify(k)).join(', ')} (an entry has ${ENTRY_FIELDS.join(', ')}; the file has models)`
        : issue.message;
    return refuse(at === '' ? message : `${at}: ${message}`);
  }
  const seen = new Map<string, number>();
  return parsed.data.models.map((e, i) => {
    const provider = e.provider?.toLowerCase();
    if (e.model === ANY_MODEL && provider === undefined) refuse(`models[${i}].model: "*" needs a provider (every model of which provider?)`);
    const key = `${provider ?? ''}\n${e.model.toLowerCase()}`;
    const first = seen.get(key);
    if (first !== undefined) refuse(`models[${i}]: the same provider and model as models[${first}]`);
    seen.set(key, i);
    const prices: Record<string, number> = { input_mtok: e.input_mtok, output_mtok: e.output_mtok };
    if (e.cache_read_mtok !== undefined) prices.cache_read_mtok = e.cache_read_mtok;
    if (e.cache_write_mtok !== undefined) prices.cache_write_mtok = e.cache_write_mtok;
    if (e.requests_kcount !== undefined) prices.requests_kcount = e.requests_kcount;
    return { ...(provider !== undefined ? { provider } : {}), model: e.model, prices: prices as PriceOverride['prices'] };
  });
}

/**
 * `AEP_PRICES_FILE` read and checked, at start (the daemon stops on a bad
 * one: better no start than costs silently priced from the wrong rates).
 * Synchronous, once; throws a ConfigError naming the variable.
 */
export function readPriceFile(file: string): PriceOverrides {
  let text: string;
  try {
    const st = statSync(file);
    if (!st.isFile()) return refuse('not a regular file (an absolute path to a JSON price file)');
    if (st.size > MAX_FILE_BYTES) return refuse(`larger than ${MAX_FILE_BYTES} bytes (a price file lists a few models)`);
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    return refuse(`cannot be read (${code}): an absolute path to a JSON price file`);
  }
  return { file, entries: parsePriceFile(text) };
}
