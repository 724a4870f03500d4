import type { AepEvent } from '../../src/aep/event.js';
import type { Attrs } from './span-record.js';

/**
 * Structural span attributes per AEP type: names, ids, kinds, outcomes,
 * durations. Never content: these are emitted at every exporter ceiling, so
 * nothing here may read a text field of `data`.
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
    'gen_ai.conversation.id': ev.session,
    'aep.session_id': ev.session,
    'aep.run_id': ev.run,
    'aep.source': ev.source,
    'aep.capture': ev.capture,
  });
}

export function runStartAttrs(ev: AepEvent): Attrs {
  return compactAttrs({
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': ev.agent,
    'gen_ai.request.model': ev.hermesmodel,
    ...identityAttrs(ev),
    'hermes.trigger': str(ev.data.trigger),
    'hermes.platform': ev.hermesplatform,
  });
}

export function toolStartAttrs(ev: AepEvent): Attrs {
  const tool = (ev.data.tool ?? {}) as Record<string, unknown>;
  return compactAttrs({
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': str(tool.name),
    'gen_ai.tool.call.id': str(tool.call_id),
    'gen_ai.tool.type': 'function',
    ...identityAttrs(ev),
  });
}

export function cardStartAttrs(ev: AepEvent): Attrs {
  const via = Array.isArray(ev.data.respond_via) ? ev.data.respond_via.filter((x): x is string => typeof x === 'string') : undefined;
  const fields = Array.isArray(ev.data.fields) ? ev.data.fields.length : undefined;
  const options = Array.isArray(ev.data.options) ? ev.data.options.length : undefined;
  return compactAttrs({
    'aep.attention.kind': str(ev.data.kind),
    'aep.attention.respond_via': via,
    'aep.attention.request_id': ev.id,
    'aep.attention.options': options,
    'aep.attention.fields': fields,
    ...identityAttrs(ev),
  });
}

export function delegationStartAttrs(ev: AepEvent): Attrs {
  const child = (ev.data.child ?? {}) as Record<string, unknown>;
  return compactAttrs({
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'hermes.subagent',
    'aep.delegation.child_session_id': str(child.session),
    'hermes.child_role': str(ev.data.role),
    ...identityAttrs(ev),
  });
}

/** What a unit's terminal (or a lifecycle step) adds to its span. */
export function terminalAttrs(ev: AepEvent): { attrs: Attrs; status?: { code: 'error'; message: string } } {
  const d = ev.data;
  switch (ev.type) {
    case 'run.finished':
      return { attrs: { 'aep.outcome': 'finished' } };
    case 'run.cancelled':
      // an interrupted turn is cancelled, not failed: no error status
      return { attrs: compactAttrs({ 'aep.outcome': 'cancelled', 'aep.cancelled_by': str(d.by) }) };
    case 'run.failed': {
      const type = str(d.reason) ?? 'run_failed';
      return { attrs: { 'aep.outcome': 'failed', 'error.type': type }, status: { code: 'error', message: type } };
    }
    case 'tool.completed':
      return { attrs: compactAttrs({ 'aep.outcome': 'completed', 'hermes.tool.duration_ms': num(d.duration_ms) }) };
    case 'tool.failed': {
      const type = str((d.error as Record<string, unknown> | undefined)?.type) ?? 'tool_error';
      return {
        attrs: compactAttrs({ 'aep.outcome': 'failed', 'error.type': type, 'hermes.tool.duration_ms': num(d.duration_ms) }),
        status: { code: 'error', message: type },
      };
    }
    case 'tool.denied':
      return {
        attrs: compactAttrs({
          'aep.outcome': 'denied',
          'error.type': 'tool_denied',
          'aep.denied_by': str(d.by),
          'hermes.tool.duration_ms': num(d.duration_ms),
        }),
        status: { code: 'error', message: 'tool_denied' },
      };
    case 'attention.answered': {
      const answer = (d.answer ?? {}) as Record<string, unknown>;
      // option ids are structural (the vendor's menu ids); free text never rides here
      return { attrs: compactAttrs({ 'aep.attention.answer.option': str(answer.option), 'aep.attention.answered_via': str(d.via) }) };
    }
    case 'attention.resolved':
      return { attrs: compactAttrs({ 'aep.attention.resolution': str(d.resolution), 'aep.attention.latency_ms': num(d.latency_ms) }) };
    case 'attention.timeout':
      return { attrs: compactAttrs({ 'aep.attention.resolution': 'timeout', 'aep.attention.latency_ms': num(d.after_ms) }) };
    case 'delegation.subagent.stopped': {
      const status = str(d.status);
      const failed = status !== undefined && /fail|error|timeout|interrupt/i.test(status);
      return {
        attrs: compactAttrs({
          'hermes.child_status': status,
          'hermes.duration_ms': num(d.duration_ms),
          'error.type': failed ? `subagent_${status}` : undefined,
        }),
        ...(failed ? { status: { code: 'error' as const, message: `subagent_${status}` } } : {}),
      };
    }
    case 'x.hermes.api.error':
      // the provider is only reported when a model call fails
      return { attrs: compactAttrs({ 'gen_ai.provider.name': ev.hermesprovider, 'gen_ai.request.model': ev.hermesmodel }) };
    default:
      return { attrs: {} };
  }
}
