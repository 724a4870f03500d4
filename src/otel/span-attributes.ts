import type { AepEvent } from '../aep/event.js';
import { X_HERMES, type AepType } from '../aep/lifecycle.js';
import { SPAN_ATTR as A } from './attribute-catalogue.js';
import type { Attrs } from './span-record.js';

/**
 * Structural span attributes per AEP type: names, ids, kinds, outcomes,
 * durations (names from the attribute catalogue, types from the AEP
 * lifecycle table). Never content: these are emitted at every exporter
 * ceiling, so nothing here may read a text field of `data`.
 */
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 && v.length <= 256 ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function compactAttrs(a: Record<string, string | number | boolean | string[] | undefined>): Attrs {
  const out: Attrs = {};
  for (const [k, v] of Object.entries(a)) if (v !== undefined) out[k] = v;
  return out;
}

/** Identity attributes every span carries (the AEP-0005 bridge names). */
export function identityAttrs(ev: AepEvent): Attrs {
  return compactAttrs({
    [A.conversationId]: ev.session,
    [A.sessionId]: ev.session,
    [A.session]: ev.session,
    [A.runId]: ev.run,
    [A.source]: ev.source,
    [A.capture]: ev.capture,
  });
}

export function runStartAttrs(ev: AepEvent): Attrs {
  return compactAttrs({
    [A.operationName]: 'invoke_agent',
    [A.agentName]: ev.agent,
    [A.requestModel]: ev.hermesmodel,
    ...identityAttrs(ev),
    [A.trigger]: str(ev.data.trigger),
    [A.platform]: ev.hermesplatform,
  });
}

export function toolStartAttrs(ev: AepEvent): Attrs {
  const tool = (ev.data.tool ?? {}) as Record<string, unknown>;
  return compactAttrs({
    [A.operationName]: 'execute_tool',
    [A.toolName]: str(tool.name),
    [A.toolCallId]: str(tool.call_id),
    [A.toolType]: 'function',
    ...identityAttrs(ev),
  });
}

export function cardStartAttrs(ev: AepEvent): Attrs {
  const via = Array.isArray(ev.data.respond_via) ? ev.data.respond_via.filter((x): x is string => typeof x === 'string') : undefined;
  const fields = Array.isArray(ev.data.fields) ? ev.data.fields.length : undefined;
  const options = Array.isArray(ev.data.options) ? ev.data.options.length : undefined;
  return compactAttrs({
    [A.attentionKind]: str(ev.data.kind),
    [A.attentionRespondVia]: via,
    [A.attentionRequestId]: ev.id,
    [A.attentionOptions]: options,
    [A.attentionFields]: fields,
    ...identityAttrs(ev),
  });
}

export function delegationStartAttrs(ev: AepEvent): Attrs {
  const child = (ev.data.child ?? {}) as Record<string, unknown>;
  return compactAttrs({
    [A.operationName]: 'invoke_agent',
    [A.agentName]: 'hermes.subagent',
    [A.delegationChildSessionId]: str(child.session),
    [A.childRole]: str(ev.data.role),
    ...identityAttrs(ev),
  });
}

/** The usage attributes: AEP's usage members mirror these GenAI names verbatim (AEP-0002 §5.2), so each is read under its own name. */
const USAGE_ATTRS = [A.inputTokens, A.outputTokens, A.cacheReadTokens, A.cacheCreationTokens, A.reasoningTokens] as const;

/** The GenAI usage attributes from an event's flat usage members (a model call's, or a turn's sum). */
export function usageAttrs(d: Data): Attrs {
  return compactAttrs(Object.fromEntries(USAGE_ATTRS.map((name) => [name, num(d[name])])));
}

/** `aep.cost.usd` from an AEP cost object in USD (another currency is not summed into it). */
function costAttrs(d: Data): Attrs {
  const cost = d.cost as Record<string, unknown> | undefined;
  return cost?.currency === 'USD' ? compactAttrs({ [A.costUsd]: num(cost.total) }) : {};
}

/** A model call's `chat {model}` span (GenAI inference span): everything but content (span-content.ts). */
export function chatAttrs(ev: AepEvent): Attrs {
  const d = ev.data;
  const finish = str(d.finish_reason);
  return compactAttrs({
    [A.operationName]: 'chat',
    [A.providerName]: str(d.provider),
    [A.requestModel]: str(d.model),
    [A.responseModel]: str(d.response_model),
    [A.finishReasons]: finish !== undefined ? [finish] : undefined,
    ...usageAttrs(d),
    ...costAttrs(d),
    [A.serverAddress]: str(d.server_address),
    [A.serverPort]: num(d.server_port),
    [A.apiCall]: num(d.api_call),
    [A.apiMode]: str(d.api_mode),
    [A.auxTask]: str(d.aux_task),
    [A.usageUnknown]: d.usage_unknown === true ? true : undefined,
    [A.firstTokenMs]: num(d.first_token_ms),
    ...identityAttrs(ev),
  });
}

/** A turn's summed usage and cost, from its terminal (identity sums the model calls onto it). */
const runTotalsAttrs = (d: Data): Attrs => ({ ...usageAttrs(d), ...costAttrs(d) });

type Outcome = { attrs: Attrs; status?: { code: 'error'; message: string } };
type Data = AepEvent['data'];

/** What each unit outcome (a terminal, or a step such as an answer) adds to its span; keyed by the AEP lifecycle's types. */
const OUTCOMES: Partial<Record<AepType, (d: Data, ev: AepEvent) => Outcome>> = {
  'run.finished': (d) => ({ attrs: { [A.outcome]: 'finished', ...runTotalsAttrs(d) } }),
  // an interrupted turn is cancelled, not failed: no error status
  'run.cancelled': (d) => ({ attrs: compactAttrs({ [A.outcome]: 'cancelled', [A.cancelledBy]: str(d.by), ...runTotalsAttrs(d) }) }),
  'run.failed': (d) => {
    const type = str(d.reason) ?? 'run_failed';
    return { attrs: { [A.outcome]: 'failed', [A.errorType]: type, ...runTotalsAttrs(d) }, status: { code: 'error', message: type } };
  },
  'tool.completed': (d) => ({ attrs: compactAttrs({ [A.outcome]: 'completed', [A.toolDurationMs]: num(d.duration_ms) }) }),
  'tool.failed': (d) => {
    const type = str((d.error as Record<string, unknown> | undefined)?.type) ?? 'tool_error';
    return {
      attrs: compactAttrs({ [A.outcome]: 'failed', [A.errorType]: type, [A.toolDurationMs]: num(d.duration_ms) }),
      status: { code: 'error', message: type },
    };
  },
  'tool.denied': (d) => ({
    attrs: compactAttrs({ [A.outcome]: 'denied', [A.errorType]: 'tool_denied', [A.deniedBy]: str(d.by), [A.toolDurationMs]: num(d.duration_ms) }),
    status: { code: 'error', message: 'tool_denied' },
  }),
  'attention.answered': (d, ev) => {
    const answer = (d.answer ?? {}) as Record<string, unknown>;
    const via = str(d.via);
    // option ids are structural (the vendor's menu ids); free text never rides here. An answer over
    // control is caused by its command (AEP-0004 §7); any other answer's cause is the card itself
    return {
      attrs: compactAttrs({
        [A.attentionAnswerOption]: str(answer.option),
        [A.attentionAnsweredVia]: via,
        [A.controlCommandId]: via === 'control' ? str(ev.cause) : undefined,
      }),
    };
  },
  'attention.resolved': (d) => ({ attrs: compactAttrs({ [A.attentionResolution]: str(d.resolution), [A.attentionLatencyMs]: num(d.latency_ms) }) }),
  'attention.timeout': (d) => ({ attrs: compactAttrs({ [A.attentionResolution]: 'timeout', [A.attentionLatencyMs]: num(d.after_ms) }) }),
  'delegation.subagent.stopped': (d) => {
    const status = str(d.status);
    const failed = status !== undefined && /fail|error|timeout|interrupt/i.test(status);
    return {
      attrs: compactAttrs({ [A.childStatus]: status, [A.durationMs]: num(d.duration_ms), [A.errorType]: failed ? `subagent_${status}` : undefined }),
      ...(failed ? { status: { code: 'error' as const, message: `subagent_${status}` } } : {}),
    };
  },
  // a failed model call names its provider too (a successful one's comes from its chat span, span-builder.ts)
  [X_HERMES.apiError]: (_d, ev) => ({ attrs: compactAttrs({ [A.providerName]: ev.hermesprovider, [A.requestModel]: ev.hermesmodel }) }),
};

/** What a unit's terminal (or a lifecycle step) adds to its span. */
export function terminalAttrs(ev: AepEvent): Outcome {
  const outcome = Object.hasOwn(OUTCOMES, ev.type) ? OUTCOMES[ev.type] : undefined;
  return outcome?.(ev.data, ev) ?? { attrs: {} };
}
