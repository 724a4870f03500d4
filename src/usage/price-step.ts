import type { KeyedEvent, MappedHook } from '../aep/mapped.js';
import type { Cost, ModelCallPayload } from '../aep/payloads.js';
import { X_HERMES } from '../aep/lifecycle.js';
import type { ModelUsage } from './token-usage.js';

/** What prices one model call (src/usage/pricer.ts); undefined: no known price (never a guess). */
export interface PriceSource {
  price(call: { provider?: string; model?: string; responseModel?: string; usage: ModelUsage; at: Date }): Cost | undefined;
}

/**
 * The pricing step, between the mapping and identity: each model call's
 * emitter-asserted cost (AEP-0002 §5.2) from its provider, model and usage,
 * priced as of the call's own start (prices change over time). Pure given
 * the price table; a call without usage, or whose model has no known price,
 * carries no cost.
 */
export function priceModelCalls(hook: MappedHook, pricer: PriceSource, now: Date): MappedHook {
  if (!hook.events.some((e) => e.type === X_HERMES.modelCall)) return hook;
  return { ...hook, events: hook.events.map((e) => (e.type === X_HERMES.modelCall ? priced(e, pricer, now) : e)) };
}

/** `e` is a model call (checked by the caller; the fallback `x.hermes.*` type keeps TypeScript from narrowing). */
function priced(e: KeyedEvent, pricer: PriceSource, now: Date): KeyedEvent {
  const d = e.data as ModelCallPayload;
  if (d['gen_ai.usage.input_tokens'] === undefined && d['gen_ai.usage.output_tokens'] === undefined) return e;
  const at = d.started_at !== undefined ? new Date(d.started_at) : now;
  const cost = pricer.price({
    ...(d.provider !== undefined ? { provider: d.provider } : {}),
    ...(d.model !== undefined ? { model: d.model } : {}),
    ...(d.response_model !== undefined ? { responseModel: d.response_model } : {}),
    usage: d,
    at,
  });
  return cost ? ({ ...e, data: { ...d, cost } } as KeyedEvent) : e;
}
