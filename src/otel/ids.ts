import { createHash } from 'node:crypto';

/**
 * Span and trace ids derived from the AEP identity, not drawn at random: the
 * same run always maps to the same trace and root span, so a daemon restart
 * mid-turn, or a replay, cannot split a turn into two traces or mint a second
 * root. NUL separators keep the parts unambiguous.
 */
function hex(bytes: number, ...parts: string[]): string {
  const h = createHash('sha256')
    .update(parts.join('\u0000'), 'utf8')
    .digest('hex')
    .slice(0, bytes * 2);
  // all-zero ids are invalid in W3C trace context; astronomically unlikely, still excluded
  return /^0+$/.test(h) ? `${h.slice(0, -1)}1` : h;
}

export const traceIdFor = (session: string, run: string): string => hex(16, 'hermes-aep/trace', session, run);
export const runSpanId = (session: string, run: string): string => hex(8, 'hermes-aep/run', session, run);
export const toolSpanId = (session: string, openingEventId: string): string => hex(8, 'hermes-aep/tool', session, openingEventId);
export const cardSpanId = (requestId: string): string => hex(8, 'hermes-aep/card', requestId);
/** A model call's `chat` span, from its event's id (stable across replay). */
export const chatSpanId = (session: string, eventId: string): string => hex(8, 'hermes-aep/chat', session, eventId);
export const delegationSpanId = (session: string, child: string): string => hex(8, 'hermes-aep/delegation', session, child);
/** A trace for a unit that belongs to no run (e.g. a tool call without a turn id). */
export const orphanTraceId = (session: string, key: string): string => hex(16, 'hermes-aep/orphan', session, key);

export function traceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}
