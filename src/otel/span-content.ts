import type { AepEvent } from '../aep/event.js';
import { captureRank, minCapture, type CaptureLevel } from '../core/capture-levels.js';
import { downlevel } from '../capture/downlevel.js';
import type { CaptureEvent } from '../capture/types.js';
import { X_HERMES } from '../aep/lifecycle.js';
import { SPAN_ATTR as A } from './attribute-catalogue.js';
import type { Attrs } from './span-record.js';

/** bounded like span event data: a span holds its attributes in memory until it ends */
const MAX_CONTENT_CHARS = 16_384;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The event's data as the exporter may show it: only where BOTH the event's
 * own capture and the exporter's ceiling (AEP_OTEL_CAPTURE) are `redacted` or
 * above, down-leveled to the lower of the two; undefined below.
 */
export function visibleData(ev: AepEvent, ceiling: CaptureLevel): Record<string, unknown> | undefined {
  const level = minCapture(ev.capture, ceiling);
  if (captureRank(level) < captureRank('redacted')) return undefined;
  const data = downlevel(ev as unknown as CaptureEvent, level).data;
  return isRecord(data) ? data : undefined;
}

/** One of a pair of fields (`x` at full, `x_redacted` at redacted): whichever the level left. */
const pick = (d: Record<string, unknown>, field: string): unknown => d[field] ?? d[`${field}_redacted`];

function json(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length <= MAX_CONTENT_CHARS ? text : undefined;
}

/** GenAI message parts from a model call's output: its text, then its tool calls. */
function outputParts(out: Record<string, unknown>): Record<string, unknown>[] {
  const parts: Record<string, unknown>[] = [];
  if (typeof out.content === 'string') parts.push({ type: 'text', content: out.content });
  for (const c of Array.isArray(out.tool_calls) ? out.tool_calls : []) {
    if (!isRecord(c)) continue;
    parts.push({
      type: 'tool_call',
      ...(c.id !== undefined ? { id: c.id } : {}),
      name: c.name ?? 'unknown',
      ...(c.arguments !== undefined ? { arguments: c.arguments } : {}),
    });
  }
  return parts;
}

/**
 * The GenAI content attributes one event adds to its span, in the JSON shapes
 * the conventions give them (input and output messages as arrays of
 * `{role, parts}`; tool arguments and results as JSON text), only
 * where the capture levels admit its content. A value too long is left out
 * (the span event's `aep.data.omitted_chars` says so). `d`: the event's data as
 * `visibleData` leaves it (computed once per event, for the span event too).
 */
export function contentAttrs(ev: AepEvent, d: Record<string, unknown> | undefined): Attrs {
  if (!d) return {};
  const out: Record<string, string | undefined> = {};
  switch (ev.type) {
    case X_HERMES.modelCall: {
      const o = pick(d, 'output');
      if (!isRecord(o)) break;
      const finish = typeof d.finish_reason === 'string' ? { finish_reason: d.finish_reason } : {};
      out[A.outputMessages] = json([{ role: 'assistant', parts: outputParts(o), ...finish }]);
      break;
    }
    case 'run.started':
      if (typeof d.prompt === 'string') out[A.inputMessages] = json([{ role: 'user', parts: [{ type: 'text', content: d.prompt }] }]);
      break;
    case 'tool.requested':
      out[A.toolCallArguments] = json(pick(d, 'args'));
      break;
    case 'tool.completed':
      out[A.toolCallResult] = json(pick(d, 'result'));
      break;
    default:
      break;
  }
  const attrs: Attrs = {};
  for (const [k, v] of Object.entries(out)) if (v !== undefined) attrs[k] = v;
  return attrs;
}
