/** Reading and summing token usage of model calls; the names themselves are vocabulary (src/core/usage-keys.ts). */
import {
  CACHE_CREATION_TOKENS,
  CACHE_READ_TOKENS,
  INPUT_TOKENS,
  OUTPUT_TOKENS,
  REASONING_TOKENS,
  USAGE_KEYS,
  type ModelUsage,
  type UsageKey,
} from '../core/usage-keys.js';

export { CACHE_CREATION_TOKENS, CACHE_READ_TOKENS, INPUT_TOKENS, OUTPUT_TOKENS, REASONING_TOKENS, USAGE_KEYS, type ModelUsage } from '../core/usage-keys.js';

/** a token count: a non-negative safe integer (-0 read as 0), anything else undefined */
function count(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v + 0 : undefined;
}

/** a + b, or undefined when the sum is no longer a safe integer */
function sum(...parts: number[]): number | undefined {
  return count(parts.reduce((a, b) => a + b, 0));
}

/** Only the members that are set: `{ key: undefined }` never appears in an event. */
function compact(u: { -readonly [K in UsageKey]?: number | undefined }): ModelUsage | undefined {
  const out: { -readonly [K in UsageKey]?: number } = {};
  for (const k of USAGE_KEYS) {
    const v = u[k];
    if (v !== undefined) out[k] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Hermes's `post_api_request` `usage` (agent/usage_pricing.py CanonicalUsage,
 * as `_usage_summary_for_api_request_hook` sends it) in the GenAI names.
 *
 * Hermes splits the input into disjoint buckets: `input_tokens` is the
 * UNCACHED input only, `cache_read_tokens` and `cache_write_tokens` the rest
 * (its `prompt_tokens` is their sum). The GenAI input is the whole, so it is
 * input + cache read + cache write; when `input_tokens` is unusable, Hermes's
 * own `prompt_tokens` total stands in (if it covers the cache buckets).
 * `output_tokens` and `reasoning_tokens` carry over as they are (`request_count`
 * and `total_tokens` have no member here). Defensive: a bucket that is not a
 * non-negative safe integer is absent, and so is an input total that cannot
 * be formed; undefined when nothing usable is left (not an object, or no
 * bucket readable).
 */
export function fromHermesUsage(raw: unknown): ModelUsage | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const r = raw as Record<string, unknown>;
  const uncached = count(r.input_tokens);
  const cacheRead = count(r.cache_read_tokens);
  const cacheWrite = count(r.cache_write_tokens);
  const prompt = count(r.prompt_tokens);
  let input: number | undefined;
  if (uncached !== undefined) input = sum(uncached, cacheRead ?? 0, cacheWrite ?? 0);
  else if (prompt !== undefined && prompt >= (cacheRead ?? 0) + (cacheWrite ?? 0)) input = prompt;
  return compact({
    [INPUT_TOKENS]: input,
    [OUTPUT_TOKENS]: count(r.output_tokens),
    [CACHE_READ_TOKENS]: cacheRead,
    [CACHE_CREATION_TOKENS]: cacheWrite,
    [REASONING_TOKENS]: count(r.reasoning_tokens),
  });
}

/**
 * The usage of two calls together (a turn's, a session's running total).
 * A member is the sum of the two; one side's absent member counts as 0, so a
 * member is absent only when both lack it (or the sum leaves the safe-integer
 * range). Either argument may be undefined (nothing reported yet).
 */
export function addUsage(a: ModelUsage | undefined, b: ModelUsage | undefined): ModelUsage | undefined {
  if (a === undefined) return b === undefined ? undefined : compact(b);
  if (b === undefined) return compact(a);
  const out: { -readonly [K in UsageKey]?: number } = {};
  for (const k of USAGE_KEYS) {
    const x = count(a[k]);
    const y = count(b[k]);
    if (x !== undefined || y !== undefined) out[k] = sum(x ?? 0, y ?? 0);
  }
  return compact(out);
}
