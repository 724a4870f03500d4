import { METRIC_ATTR as M } from './instrument-catalogue.js';

/**
 * How many distinct values each metric attribute may take over the daemon's
 * life: the first values seen keep their name, every later new one is
 * recorded as `other` (what the hook names and event types already do with
 * a fixed set, generalised to values only the input knows: tool names,
 * models, providers, servers). Every key of METRIC_ATTR has one; the
 * attributes with a fixed set of values (outcomes, token types, ...) have a
 * cap above that set, so it is never reached. docs/metrics.md has the table.
 */
export const LABEL_CAPS = {
  [M.toolName]: 100,
  [M.requestModel]: 50,
  [M.responseModel]: 50,
  [M.providerName]: 20,
  [M.serverAddress]: 20,
  [M.serverPort]: 20,
  [M.agentName]: 20,
  [M.errorType]: 50,
  [M.hook]: 32,
  [M.eventType]: 64,
  [M.sink]: 32,
  [M.reason]: 64,
  [M.operationName]: 8,
  [M.tokenType]: 8,
  [M.outcome]: 8,
  [M.attentionKind]: 8,
  [M.attentionResolution]: 8,
  [M.approvalChoice]: 16,
  [M.signal]: 8,
} as const satisfies Record<(typeof M)[keyof typeof M], number>;

/**
 * Series (distinct attribute sets) per instrument, over the daemon's life;
 * past it a measurement is recorded in the one overflow series the SDK uses
 * for its own limit (`otel.metric.overflow=true`). The SDK's
 * `aggregationCardinalityLimit` alone bounds only the series new within one
 * export interval: with cumulative temporality the reader keeps every series
 * it ever exported.
 */
export const SERIES_LIMIT = 1000;

/** The value an attribute past its cap takes. */
export const OTHER = 'other';
/** The attribute of the SDK's overflow series (the OpenTelemetry specification's name). */
export const OVERFLOW_ATTR = 'otel.metric.overflow';

/** An attribute key that is not in the catalogue (the SDK's allow-list drops it anyway) is held to this. */
const UNLISTED_CAP = 8;

export type AttrValue = string | number | boolean;

/** The values one attribute has taken: the first `max` keep their name. */
class CappedValues {
  private readonly seen = new Set<AttrValue>();

  constructor(private readonly max: number) {}

  /** the value itself, or `other` once `max` others were seen (`other` itself never counts) */
  admit(v: AttrValue): AttrValue {
    if (v === OTHER || this.seen.has(v)) return v;
    if (this.seen.size >= this.max) return OTHER;
    this.seen.add(v);
    return v;
  }
}

/** Every attribute's distinct values, capped (see LABEL_CAPS); `capped` counts the values sent to `other`. */
export class LabelCaps {
  private readonly byKey = new Map<string, CappedValues>();
  capped = 0;

  value(key: string, v: AttrValue): AttrValue {
    let c = this.byKey.get(key);
    if (!c) this.byKey.set(key, (c = new CappedValues((LABEL_CAPS as Readonly<Record<string, number>>)[key] ?? UNLISTED_CAP)));
    const out = c.admit(v);
    if (out !== v) this.capped++;
    return out;
  }

  apply<A extends Record<string, AttrValue>>(attrs: A): A {
    const out: Record<string, AttrValue> = {};
    for (const [k, v] of Object.entries(attrs)) out[k] = this.value(k, v);
    return out as A;
  }
}

/** The attribute sets of one instrument: at most `limit - 1` by name, the rest in the overflow series; `capped` counts those. */
export class SeriesCap {
  private readonly seen = new Map<string, Set<string>>();
  capped = 0;

  constructor(private readonly limit = SERIES_LIMIT) {}

  apply(instrument: string, attrs: Readonly<Record<string, AttrValue>>): Record<string, AttrValue> {
    let sets = this.seen.get(instrument);
    if (!sets) this.seen.set(instrument, (sets = new Set()));
    const key = JSON.stringify(Object.entries(attrs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    if (sets.has(key)) return { ...attrs };
    if (sets.size < this.limit - 1) {
      sets.add(key);
      return { ...attrs };
    }
    this.capped++;
    return { [OVERFLOW_ATTR]: true };
  }
}
