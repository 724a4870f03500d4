/**
 * Token usage of one model call (or a sum of calls), as AEP-0002 §5.2 carries
 * `usage`: flat, under the OpenTelemetry GenAI semantic-convention names.
 *
 * `gen_ai.usage.input_tokens` is the WHOLE input, cached tokens included (the
 * GenAI convention's meaning, and what price databases expect); the two cache
 * members say how much of it was read from, or written to, the provider's
 * prompt cache. `gen_ai.usage.reasoning.output_tokens` is the part of the
 * output spent on reasoning. Every member is a non-negative safe integer, or
 * absent when the agent did not report it (never 0 for unknown).
 */
export const INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
export const CACHE_READ_TOKENS = 'gen_ai.usage.cache_read.input_tokens';
export const CACHE_CREATION_TOKENS = 'gen_ai.usage.cache_creation.input_tokens';
export const REASONING_TOKENS = 'gen_ai.usage.reasoning.output_tokens';

export interface ModelUsage {
  readonly [INPUT_TOKENS]?: number;
  readonly [OUTPUT_TOKENS]?: number;
  readonly [CACHE_READ_TOKENS]?: number;
  readonly [CACHE_CREATION_TOKENS]?: number;
  readonly [REASONING_TOKENS]?: number;
}

export type UsageKey = keyof ModelUsage;
export const USAGE_KEYS: readonly UsageKey[] = [INPUT_TOKENS, OUTPUT_TOKENS, CACHE_READ_TOKENS, CACHE_CREATION_TOKENS, REASONING_TOKENS];
