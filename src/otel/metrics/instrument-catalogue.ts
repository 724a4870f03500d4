import { SPAN_ATTR as A } from '../attribute-catalogue.js';

/**
 * Every metric instrument this daemon records: its OTel name, kind, unit,
 * meaning, the ONLY attribute keys it may carry (the SDK's view drops any
 * other), and its histogram buckets. The dashboard's PromQL is built on
 * these names: change one only together with it.
 */

/** The metric attribute keys: the GenAI semantic-convention ones shared with the spans, and this project's. */
export const METRIC_ATTR = {
  operationName: A.operationName,
  providerName: A.providerName,
  requestModel: A.requestModel,
  responseModel: A.responseModel,
  serverAddress: A.serverAddress,
  serverPort: A.serverPort,
  agentName: A.agentName,
  toolName: A.toolName,
  errorType: A.errorType,
  tokenType: 'gen_ai.token.type',
  outcome: A.outcome,
  attentionKind: A.attentionKind,
  attentionResolution: A.attentionResolution,
  approvalChoice: 'aep.approval.choice',
  eventType: 'aep.event.type',
  hook: 'hermes.hook',
  sink: 'aep.sink',
  reason: 'aep.reason',
  signal: 'aep.signal',
} as const;

const M = METRIC_ATTR;

export type InstrumentKind = 'histogram' | 'counter' | 'observableGauge' | 'observableCounter';

export interface InstrumentSpec {
  readonly name: string;
  readonly kind: InstrumentKind;
  readonly unit: string;
  readonly description: string;
  /** every attribute key a data point may carry */
  readonly attributes: readonly string[];
  /** explicit bucket boundaries (histograms) */
  readonly buckets?: readonly number[];
  /** a double-valued instrument (the others record whole numbers) */
  readonly double?: boolean;
}

/** The GenAI conventions' advice for `gen_ai.client.token.usage`: powers of 4 from 1 to 4^13. */
export const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864] as const;
/** The GenAI conventions' advice for `gen_ai.client.operation.duration`: 10 ms doubling to 81.92 s. */
export const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92] as const;
/** A person's wait on a card: half a second to an hour. */
export const HUMAN_WAIT_BUCKETS = [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600] as const;

const MODEL_CALL = [M.operationName, M.providerName, M.requestModel, M.responseModel, M.serverAddress, M.serverPort] as const;

export const INSTRUMENTS = {
  tokenUsage: {
    name: 'gen_ai.client.token.usage',
    kind: 'histogram',
    unit: '{token}',
    description: 'Tokens per model call, by token type (input, output).',
    attributes: [...MODEL_CALL, M.tokenType],
    buckets: TOKEN_BUCKETS,
  },
  operationDuration: {
    name: 'gen_ai.client.operation.duration',
    kind: 'histogram',
    unit: 's',
    description: 'Duration of a model call (chat), a turn (invoke_agent) or a tool call (execute_tool).',
    attributes: [...MODEL_CALL, M.agentName, M.toolName, M.errorType],
    buckets: DURATION_BUCKETS,
    double: true,
  },
  firstToken: {
    name: 'aep.model.time_to_first_token',
    kind: 'histogram',
    unit: 's',
    description: 'A streamed model call\u2019s time from its stream start to its first text chunk (or its end), as the daemon received them.',
    attributes: [...MODEL_CALL],
    buckets: DURATION_BUCKETS,
    double: true,
  },
  runs: {
    name: 'aep.runs',
    kind: 'counter',
    unit: '{run}',
    description: 'Turns ended, by outcome (finished, failed, cancelled).',
    attributes: [M.outcome, M.agentName],
  },
  toolCalls: {
    name: 'aep.tool.calls',
    kind: 'counter',
    unit: '{call}',
    description: 'Tool calls ended, by tool and outcome (ok, failed, denied).',
    attributes: [M.toolName, M.outcome],
  },
  attentionCards: {
    name: 'aep.attention.cards',
    kind: 'counter',
    unit: '{card}',
    description: 'Attention cards closed, by kind and resolution (answered, timeout, dismissed, auto).',
    attributes: [M.attentionKind, M.attentionResolution],
  },
  attentionWait: {
    name: 'aep.attention.wait',
    kind: 'histogram',
    unit: 's',
    description: 'How long a card waited, from attention.requested to its resolution.',
    attributes: [M.attentionKind, M.attentionResolution],
    buckets: HUMAN_WAIT_BUCKETS,
    double: true,
  },
  approvals: {
    name: 'aep.approvals',
    kind: 'counter',
    unit: '{approval}',
    description: 'Permission cards closed, by the choice made (once, session, always, allow, deny, timeout, dismissed, other).',
    attributes: [M.approvalChoice],
  },
  cost: {
    name: 'aep.cost',
    kind: 'counter',
    unit: '{USD}',
    description: 'Priced model calls\u2019 cost in US dollars (an unpriced call adds nothing).',
    attributes: [M.providerName, M.requestModel],
    double: true,
  },
  events: {
    name: 'aep.events',
    kind: 'counter',
    unit: '{event}',
    description: 'AEP events this daemon emitted, by type.',
    attributes: [M.eventType],
  },
  hooks: {
    name: 'aep.hooks',
    kind: 'observableCounter',
    unit: '{hook}',
    description: 'Hermes hooks received, by hook name (unknown names as other).',
    attributes: [M.hook],
  },
  queueDepth: {
    name: 'aep.queue.depth',
    kind: 'observableGauge',
    unit: '{event}',
    description: 'Items waiting in a bounded queue, by sink.',
    attributes: [M.sink],
  },
  dropped: {
    name: 'aep.dropped',
    kind: 'observableCounter',
    unit: '{event}',
    description: 'Items given up, by sink and reason (the drop counters /healthz shows).',
    attributes: [M.sink, M.reason],
  },
  exportFailures: {
    name: 'aep.export.failures',
    kind: 'observableCounter',
    unit: '{request}',
    description: 'Failed export requests, by signal (traces, metrics, logs).',
    attributes: [M.signal],
  },
} as const satisfies Record<string, InstrumentSpec>;

export type InstrumentId = keyof typeof INSTRUMENTS;

/** An attribute value as a metric may carry it: a short, printable identifier, else `other` (never free text). */
export function bounded(v: unknown, max = 128): string | undefined {
  if (typeof v !== 'string' || v.length === 0) return undefined;
  return v.length <= max && /^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$/.test(v) ? v : 'other';
}
