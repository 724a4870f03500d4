import type { KeyedEvent, MappedHook } from '../aep/mapped.js';
import type { ModelCallPayload } from '../aep/payloads.js';
import { X_HERMES } from '../aep/lifecycle.js';
import type { Pricer } from './pricer.js';

/** What prices one model call; undefined: no known price (never a guess). */
export type PriceSource = Pick<Pricer, 'price'>;

/**
 * The pricing step, between the mapping and identity: each model call's
 * emitter-asserted cost (AEP-0002 §5.2) from its provider, model and usage,
 * priced as of the call's own start (prices change over time). Pure given
 * the price table; a call without usage, or whose model has no known price,
 * carries no cost. The hook's model server (`facts.modelServer()`, the
 * address the mapping read) tells a local server or a coding plan, whose calls
 * are not billed per token; it is read here and never carried in the event.
 */
export function priceModelCalls(hook: MappedHook, pricer: PriceSource, now: Date): MappedHook {
  if (!hook.events.some((e) => e.type === X_HERMES.modelCall)) return hook;
  const baseUrl = hook.facts.modelServer();
  return { ...hook, events: hook.events.map((e) => (e.type === X_HERMES.modelCall ? priced(e, pricer, now, baseUrl) : e)) };
}

/** `e` is a model call (checked by the caller; the fallback `x.hermes.*` type keeps TypeScript from narrowing). */
function priced(e: KeyedEvent, pricer: PriceSource, now: Date, baseUrl: string | undefined): KeyedEvent {
  const d = e.data as ModelCallPayload;
  if (d['gen_ai.usage.input_tokens'] === undefined && d['gen_ai.usage.output_tokens'] === undefined) return e;
  const at = d.started_at !== undefined ? new Date(d.started_at) : now;
  const cost = pricer.price({
    ...(d.provider !== undefined ? { provider: d.provider } : {}),
    ...(d.model !== undefined ? { model: d.model } : {}),
    ...(d.response_model !== undefined ? { responseModel: d.response_model } : {}),
    ...(baseUrl !== undefined ? { baseUrl } : {}),
    usage: d,
    at,
  });
  return cost ? ({ ...e, data: { ...d, cost } } as KeyedEvent) : e;
}
