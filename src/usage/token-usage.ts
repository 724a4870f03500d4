import type { Usage } from '../aep/payloads.js';

/** The usage keys, as the GenAI semantic conventions name them. */
export const USAGE_KEYS = [
  'gen_ai.usage.input_tokens',
  'gen_ai.usage.output_tokens',
  'gen_ai.usage.cache_read.input_tokens',
  'gen_ai.usage.cache_creation.input_tokens',
  'gen_ai.usage.reasoning.output_tokens',
] as const;

export type ModelUsage = Usage;

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);

/**
 * Hermes's normalized buckets (`CanonicalUsage`: `input_tokens` is the
 * UNCACHED input) as the GenAI names, where `gen_ai.usage.input_tokens` is
 * every input token, cached ones included. Undefined when nothing is usable.
 */
export function fromHermesUsage(raw: unknown): ModelUsage | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const u = raw as Record<string, unknown>;
  const uncached = count(u.input_tokens);
  const read = count(u.cache_read_tokens);
  const write = count(u.cache_write_tokens);
  const input = uncached === undefined && read === undefined && write === undefined ? undefined : (uncached ?? 0) + (read ?? 0) + (write ?? 0);
  const out: Record<string, number> = {};
  const put = (k: (typeof USAGE_KEYS)[number], v: number | undefined) => {
    if (v !== undefined && Number.isSafeInteger(v)) out[k] = v;
  };
  put('gen_ai.usage.input_tokens', input);
  put('gen_ai.usage.output_tokens', count(u.output_tokens));
  put('gen_ai.usage.cache_read.input_tokens', read);
  put('gen_ai.usage.cache_creation.input_tokens', write);
  put('gen_ai.usage.reasoning.output_tokens', count(u.reasoning_tokens));
  return Object.keys(out).length > 0 ? (out as ModelUsage) : undefined;
}

/** The sum of two usages: a key present in either is present in the sum. */
export function addUsage(a: ModelUsage | undefined, b: ModelUsage | undefined): ModelUsage | undefined {
  if (!a) return b;
  if (!b) return a;
  const out: Record<string, number> = {};
  for (const k of USAGE_KEYS) {
    const x = a[k];
    const y = b[k];
    if (x !== undefined || y !== undefined) out[k] = (x ?? 0) + (y ?? 0);
  }
  return out as ModelUsage;
}
