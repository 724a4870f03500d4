import type { AepEvent } from '../aep/event.js';
import type { Cost, RunTotals, Usage } from '../aep/payloads.js';
import { USAGE_KEYS, addUsage } from '../usage/token-usage.js';

/**
 * What a run's model calls add up to so far: their usage, their cost while
 * every one of them was priced, and how many there were. Summed by the
 * pairing reducer from the `x.hermes.model.call` events themselves (so a
 * restart rebuilds it from the history), handed to the run's terminal.
 */
export interface RunUsage {
  readonly calls: number;
  readonly usage?: Usage;
  /** USD; absent once any call of the run had no price (a partial sum would understate it) */
  readonly cost?: { readonly total: number; readonly prompt: number; readonly completion: number };
  readonly unpriced: number;
  /** calls that reported no usage (`usage_unknown`): their tokens are unknown, so the sums are a lower bound */
  readonly unmetered?: number;
}

/**
 * As a snapshot keeps it: [calls, unpriced, usage values in USAGE_KEYS order (null: absent), [total, prompt, completion] | null,
 * unmetered?] (the fifth only when some call reported no usage, so older snapshots read as they were written).
 */
export type RunUsageState =
  [number, number, (number | null)[], [number, number, number] | null] | [number, number, (number | null)[], [number, number, number] | null, number];

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

function usageOf(data: Record<string, unknown>): Usage | undefined {
  const out: Record<string, number> = {};
  for (const k of USAGE_KEYS) {
    const v = data[k];
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) out[k] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function usdOf(cost: unknown): { total: number; prompt: number; completion: number } | undefined {
  if (typeof cost !== 'object' || cost === null) return undefined;
  const c = cost as Record<string, unknown>;
  const total = num(c.total);
  if (c.currency !== 'USD' || total === undefined) return undefined;
  return { total, prompt: num(c.prompt) ?? 0, completion: num(c.completion) ?? 0 };
}

/** The run's sum after one more model call. */
export function addCall(before: RunUsage | undefined, ev: AepEvent): RunUsage {
  const data = ev.data as Record<string, unknown>;
  const usd = usdOf(data.cost);
  const prior = before ?? { calls: 0, unpriced: 0, cost: { total: 0, prompt: 0, completion: 0 } };
  const unpriced = prior.unpriced + (usd ? 0 : 1);
  const cost =
    unpriced === 0 && prior.cost && usd
      ? { total: prior.cost.total + usd.total, prompt: prior.cost.prompt + usd.prompt, completion: prior.cost.completion + usd.completion }
      : undefined;
  const usage = addUsage(prior.usage, usageOf(data));
  const unmetered = (prior.unmetered ?? 0) + (data.usage_unknown === true ? 1 : 0);
  return { calls: prior.calls + 1, unpriced, ...(usage ? { usage } : {}), ...(cost ? { cost } : {}), ...(unmetered > 0 ? { unmetered } : {}) };
}

/** Amounts summed in floating point, rounded back to the pricer's precision (1e-9 USD). */
const round = (usd: number): number => Math.round(usd * 1e9) / 1e9;

/**
 * What the run's terminal carries: the summed usage, and the cost when every call was priced. Nothing for a run without
 * model calls. A call that reported no usage is counted in `calls_without_usage` (its tokens are unknown, never zero), and,
 * having no price either, leaves the run without a cost.
 */
export function runTotals(u: RunUsage | undefined): RunTotals {
  if (!u || u.calls === 0) return {};
  const cost: Cost | undefined = u.cost
    ? { currency: 'USD', total: round(u.cost.total), prompt: round(u.cost.prompt), completion: round(u.cost.completion) }
    : undefined;
  return { ...u.usage, ...(cost ? { cost } : {}), ...(u.unmetered ? { calls_without_usage: u.unmetered } : {}) };
}

export function saveRunUsage(u: RunUsage): RunUsageState {
  const values = USAGE_KEYS.map((k) => u.usage?.[k] ?? null);
  const cost: [number, number, number] | null = u.cost ? [u.cost.total, u.cost.prompt, u.cost.completion] : null;
  return u.unmetered ? [u.calls, u.unpriced, values, cost, u.unmetered] : [u.calls, u.unpriced, values, cost];
}

export function loadRunUsage([calls, unpriced, values, cost, unmetered]: RunUsageState): RunUsage {
  const usage: Record<string, number> = {};
  USAGE_KEYS.forEach((k, i) => {
    const v = values[i];
    if (typeof v === 'number') usage[k] = v;
  });
  return {
    calls,
    unpriced,
    ...(Object.keys(usage).length > 0 ? { usage: usage } : {}),
    ...(cost ? { cost: { total: cost[0], prompt: cost[1], completion: cost[2] } } : {}),
    ...(unmetered ? { unmetered } : {}),
  };
}

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;
export const isRunUsageState = (v: unknown): v is RunUsageState =>
  Array.isArray(v) &&
  (v.length === 4 || (v.length === 5 && isNum(v[4]))) &&
  isNum(v[0]) &&
  isNum(v[1]) &&
  Array.isArray(v[2]) &&
  v[2].length === USAGE_KEYS.length &&
  v[2].every((x) => x === null || isNum(x)) &&
  (v[3] === null || (Array.isArray(v[3]) && v[3].length === 3 && v[3].every(isNum)));
