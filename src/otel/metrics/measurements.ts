import type { AepEvent } from '../../aep/event.js';
import { CONTROL_ACKS, FAMILIES, GUARDRAIL, X_HERMES, X_HERMES_PREFIX, isTerminalOf } from '../../aep/lifecycle.js';
import { APPROVAL_OPTION_IDS, GATE_OPTION_IDS } from '../../aep/card-options.js';
import { INPUT_TOKENS, OUTPUT_TOKENS } from '../../core/usage-keys.js';
import { RecencyMap } from '../../util/recency-map.js';
import { terminalAttrs } from '../span-attributes.js';
import { toolName } from '../unit-keys.js';
import { METRIC_ATTR as M, bounded, type InstrumentId } from './instrument-catalogue.js';

export type MetricAttrs = Record<string, string | number>;

/** One value for one instrument. */
export interface Measurement {
  readonly id: InstrumentId;
  readonly value: number;
  readonly attrs: MetricAttrs;
}

/** The AEP types this daemon emits by name; an unknown hook's `x.hermes.<name>` and anything else collapse (see `eventType`). */
const KNOWN_TYPES: ReadonlySet<string> = new Set<string>([
  ...Object.values(FAMILIES).flatMap((f) => [...f.opening, ...f.steps, ...f.terminal]),
  GUARDRAIL,
  ...CONTROL_ACKS,
  ...Object.values(X_HERMES),
]);

/** `aep.event.type`: the type when this daemon produces it by name; an unknown hook's fallback type as `x.hermes.other`; else `other`. */
export const eventType = (type: string): string => (KNOWN_TYPES.has(type) ? type : type.startsWith(X_HERMES_PREFIX) ? `${X_HERMES_PREFIX}other` : 'other');

/** The choices a permission card can close with: Hermes's menu, the control gate's, and the two non-answers. */
const APPROVAL_CHOICES: ReadonlySet<string> = new Set([...APPROVAL_OPTION_IDS, ...GATE_OPTION_IDS, 'timeout', 'dismissed']);
const RESOLUTIONS: ReadonlySet<string> = new Set(['answered', 'timeout', 'dismissed', 'auto']);
const CARD_KINDS: ReadonlySet<string> = new Set(['permission', 'input', 'auth', 'review', 'form', 'other']);

/** The open units a duration or a card's kind needs, bounded: an entry pushed out is counted, its measurement then made without it. */
export class Pairing {
  /** `session NUL run` → the turn's start and what is known of its model */
  readonly runs: RecencyMap<string, { t: number; model?: string; provider?: string }>;
  /** the card's request id → its start, kind, and the option an answer picked */
  readonly cards: RecencyMap<string, { t: number; kind: string; option?: string }>;
  evicted = 0;
  /** terminals whose opening was not in memory (evicted, or before the restart's replay window) */
  unpaired = 0;

  constructor(readonly max = 10_000) {
    this.runs = new RecencyMap(max);
    this.cards = new RecencyMap(max);
  }

  get open(): number {
    return this.runs.size + this.cards.size;
  }

  /** Take one event into the pairing state only: what the replay of the log at start does (nothing is measured). */
  remember(ev: AepEvent): void {
    measure(ev, this, false);
  }
}

const runKey = (ev: AepEvent): string | undefined => (ev.run ? `${ev.session}\u0000${ev.run}` : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
const timeOf = (v: unknown): number | undefined => (typeof v === 'string' ? Date.parse(v) : Number.NaN) || undefined;
const put = <V>(m: RecencyMap<string, V>, key: string, value: V, p: Pairing): void => {
  if (m.set(key, value)) p.evicted++;
};

/** A model call's duration in seconds: the one Hermes measured, else its end minus its start. */
function callSeconds(d: AepEvent['data']): number | undefined {
  const ms = num(d.duration_ms);
  if (ms !== undefined) return ms / 1000;
  const start = timeOf(d.started_at);
  const end = timeOf(d.ended_at);
  return start !== undefined && end !== undefined && end >= start ? (end - start) / 1000 : undefined;
}

/** Drop the attributes not known (the conventions' "when available"). */
function attrs(a: Record<string, string | number | undefined>): MetricAttrs {
  const out: MetricAttrs = {};
  for (const [k, v] of Object.entries(a)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * The measurements one live event makes, derived as the spans derive their
 * outcome (span-attributes.ts): durations from what the events carry
 * (`duration_ms`, a card's `latency_ms`/`after_ms`), else from the opening
 * kept in `pairing`. Only structural values: names, kinds, outcomes, never
 * ids or content. `record` false: update the pairing state only.
 */
export function measure(ev: AepEvent, pairing: Pairing, record = true): Measurement[] {
  const out: Measurement[] = [];
  const add = (id: InstrumentId, value: number, a: Record<string, string | number | undefined>) => {
    if (record) out.push({ id, value, attrs: attrs(a) });
  };
  add('events', 1, { [M.eventType]: eventType(ev.type) });
  const t = Date.parse(ev.time);
  const d = ev.data;
  const key = runKey(ev);

  if (ev.type === 'run.started') {
    const model = bounded(ev.hermesmodel);
    if (key) put(pairing.runs, key, { t, ...(model ? { model } : {}) }, pairing);
  } else if (isTerminalOf(ev.type, 'run')) {
    const open = key ? pairing.runs.get(key) : undefined;
    if (key) pairing.runs.delete(key);
    if (!open) pairing.unpaired++;
    const outcome = ev.type.slice('run.'.length);
    const agent = bounded(ev.agent);
    add('runs', 1, { [M.outcome]: outcome, [M.agentName]: agent });
    if (open) {
      // the same error.type the turn's span carries; an interrupted turn did not finish either
      const errorType = ev.type === 'run.cancelled' ? 'cancelled' : bounded(terminalAttrs(ev).attrs[M.errorType]);
      add('operationDuration', Math.max(0, t - open.t) / 1000, {
        [M.operationName]: 'invoke_agent',
        [M.agentName]: agent,
        [M.providerName]: open.provider,
        [M.requestModel]: open.model,
        [M.errorType]: errorType,
      });
    }
  } else if (ev.type === X_HERMES.modelCall) {
    const provider = bounded(d.provider);
    const model = bounded(d.model);
    const open = key ? pairing.runs.get(key) : undefined;
    if (open && provider && !open.provider) open.provider = provider;
    const call = {
      [M.operationName]: 'chat',
      [M.providerName]: provider,
      [M.requestModel]: model,
      [M.responseModel]: bounded(d.response_model),
      [M.serverAddress]: bounded(d.server_address, 255),
      [M.serverPort]: num(d.server_port),
    };
    const input = num(d[INPUT_TOKENS]);
    const output = num(d[OUTPUT_TOKENS]);
    if (input !== undefined) add('tokenUsage', input, { ...call, [M.tokenType]: 'input' });
    if (output !== undefined) add('tokenUsage', output, { ...call, [M.tokenType]: 'output' });
    const seconds = callSeconds(d);
    if (seconds !== undefined) add('operationDuration', seconds, call);
    const firstMs = num(d.first_token_ms);
    if (firstMs !== undefined) add('firstToken', firstMs / 1000, call);
    const cost = d.cost as Record<string, unknown> | undefined;
    const usd = cost?.currency === 'USD' ? num(cost.total) : undefined;
    if (usd !== undefined && usd > 0) add('cost', usd, { [M.providerName]: provider, [M.requestModel]: model });
  } else if (ev.type === X_HERMES.apiError) {
    // a failed call: timed only when its event carries a duration
    const seconds = num(d.duration_ms);
    const status = typeof d.status_code === 'number' ? String(d.status_code) : undefined;
    if (seconds !== undefined)
      add('operationDuration', seconds / 1000, {
        [M.operationName]: 'chat',
        [M.providerName]: bounded(ev.hermesprovider),
        [M.requestModel]: bounded(ev.hermesmodel),
        [M.errorType]: bounded(d.reason, 64) ?? status ?? '_OTHER',
      });
  } else if (isTerminalOf(ev.type, 'tool')) {
    const tool = toolName(ev);
    const outcome = ev.type === 'tool.completed' ? 'ok' : ev.type === 'tool.failed' ? 'failed' : 'denied';
    add('toolCalls', 1, { [M.toolName]: tool, [M.outcome]: outcome });
    const ms = num(d.duration_ms);
    if (ms !== undefined)
      add('operationDuration', ms / 1000, {
        [M.operationName]: 'execute_tool',
        [M.toolName]: tool,
        [M.errorType]: outcome === 'ok' ? undefined : bounded(terminalAttrs(ev).attrs[M.errorType], 64),
      });
  } else if (ev.type === 'attention.requested') {
    const kind = typeof d.kind === 'string' && CARD_KINDS.has(d.kind) ? d.kind : 'other';
    put(pairing.cards, ev.id, { t, kind }, pairing);
  } else if (ev.type === 'attention.answered') {
    const card = ev.subject ? pairing.cards.get(ev.subject) : undefined;
    const option = (d.answer as Record<string, unknown> | undefined)?.option;
    if (card && typeof option === 'string') card.option = option;
  } else if (isTerminalOf(ev.type, 'card')) {
    const card = ev.subject ? pairing.cards.get(ev.subject) : undefined;
    if (ev.subject) pairing.cards.delete(ev.subject);
    if (!card) pairing.unpaired++;
    const raw = ev.type === 'attention.timeout' ? 'timeout' : d.resolution;
    const resolution = typeof raw === 'string' && RESOLUTIONS.has(raw) ? raw : 'other';
    const kind = card?.kind ?? 'other';
    const card_ = { [M.attentionKind]: kind, [M.attentionResolution]: resolution };
    add('attentionCards', 1, card_);
    const waitMs = num(d.latency_ms) ?? num(d.after_ms) ?? (card ? Math.max(0, t - card.t) : undefined);
    if (waitMs !== undefined) add('attentionWait', waitMs / 1000, card_);
    if (kind === 'permission') {
      const choice = resolution === 'answered' ? card?.option : resolution;
      add('approvals', 1, { [M.approvalChoice]: choice !== undefined && APPROVAL_CHOICES.has(choice) ? choice : 'other' });
    }
  }
  return out;
}
