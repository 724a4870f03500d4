/**
 * The few payload facts `tail` shows for an event: structural ones (tool
 * name, status, durations, attention kind, reasons as codes) whenever the
 * event carries them, and free text (a prompt, an error message) only when
 * the event carries it AND declares a capture level that admits free text
 * (`redacted` or `full`, AEP-0001 §8.2). Nothing is looked up: a fact is
 * a member of this event's `data`, or (the one exception, `context`) what
 * the events `tail` showed before it say about it: a `tool.denied` by the
 * operator's gate. Usage counters and
 * digests are left out (noise on a terminal).
 */
import { captureRank, isCaptureLevel, DEFAULT_CAPTURE } from '../core/capture-levels.js';

export interface Fact {
  readonly text: string;
  /** a failure or denial worth coloring */
  readonly alarm?: boolean;
}

type Data = Readonly<Record<string, unknown>>;
const rec = (v: unknown): Data | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Data) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Terminal-safe text: control characters (ESC included) become visible escapes, long text is cut. */
export function clean(s: string, max = 80): string {
  // eslint-disable-next-line no-control-regex
  const safe = s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) =>
    c === '\n' ? '\\n' : c === '\t' ? '\\t' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return safe.length > max ? `${safe.slice(0, max - 1)}…` : safe;
}

export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${m}m${String(s).padStart(2, '0')}s`;
}

class Facts {
  readonly out: Fact[] = [];
  constructor(private readonly textAllowed: boolean) {}
  kv(key: string, v: unknown, alarm = false): this {
    const s = typeof v === 'string' ? str(v) : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
    if (s !== undefined) this.out.push({ text: `${key}=${clean(s, 48)}`, alarm });
    return this;
  }
  ms(key: string, v: unknown): this {
    const n = num(v);
    if (n !== undefined) this.out.push({ text: key === 'duration_ms' ? duration(n) : `${key}=${duration(n)}` });
    return this;
  }
  /** free text: only at `redacted`/`full` */
  text(key: string, v: unknown, alarm = false): this {
    const s = str(v);
    if (s !== undefined && this.textAllowed) this.out.push({ text: `${key}=${JSON.stringify(clean(s))}`, alarm });
    return this;
  }
  bare(v: unknown, alarm = false): this {
    const s = str(v);
    if (s !== undefined) this.out.push({ text: clean(s, 48), alarm });
    return this;
  }
}

/** Short form of an id for a column: the whole id when short, else its last distinctive part. */
export function shortId(id: string, max = 8): string {
  if (id.length <= max) return id;
  const parts = id.split(/[:_/-]/).filter((p) => p.length > 0);
  const last = parts[parts.length - 1] ?? '';
  if (last.length >= 4 && last.length <= 12) return last;
  return `…${id.slice(-(max - 1))}`;
}

/** A deny by the operator's gate (gate-denials.ts finds them), with its stated reason when the answer carried it. */
export interface GateDenial {
  readonly reason?: string;
}

/** What `tail` knows of an event beyond its own members, from the events before it (see gate-denials.ts). */
export interface FactContext {
  /** a `tool.denied` the operator's gate decided */
  readonly gateDenial?: GateDenial;
}

export function factsOf(event: Data, context: FactContext = {}): Fact[] {
  const type = typeof event['type'] === 'string' ? event['type'] : '';
  const capture = isCaptureLevel(event['capture']) ? event['capture'] : DEFAULT_CAPTURE;
  const f = new Facts(captureRank(capture) >= captureRank('redacted'));
  const d = rec(event['data']) ?? {};
  const subject = event['subject'];
  const tool = rec(d['tool']);
  const error = rec(d['error']);
  const child = rec(d['child']);
  if (tool !== undefined && tool['name'] !== subject) f.kv('tool', tool['name']);
  switch (type) {
    case 'session.started':
      f.kv('client', rec(d['client'])?.['name']).kv('model', d['gen_ai.request.model']);
      if (rec(d['parent'])?.['session'] !== undefined) f.kv('parent', shortId(String(rec(d['parent'])?.['session'])));
      f.text('label', d['label']);
      break;
    case 'session.ended':
      // hermesendedby: idle marks an end the daemon made for a session Hermes went quiet in (AEP_SESSION_IDLE_S)
      f.kv('reason', d['reason'], d['reason'] === 'error')
        .kv('ended_by', event['hermesendedby'] === 'idle' ? 'idle' : undefined)
        .ms('duration_ms', d['duration_ms'])
        .kv('runs', d['runs']);
      break;
    case 'run.started':
      f.kv('trigger', d['trigger']).text('prompt', d['prompt']);
      break;
    case 'run.finished':
      f.ms('duration_ms', d['duration_ms']).text('summary', d['summary']);
      totals(f, d);
      break;
    case 'run.cancelled':
      f.kv('by', d['by'], true).text('reason', d['reason']).ms('duration_ms', d['duration_ms']);
      totals(f, d);
      break;
    case 'run.failed':
    case 'tool.failed':
    case 'error.raised':
      f.kv('reason', d['reason'], true).kv('error', error?.['type'], true).kv('code', d['code'], true);
      f.text('message', error?.['message'], true).ms('duration_ms', d['duration_ms']);
      break;
    case 'tool.completed':
      f.kv('status', d['status']).ms('duration_ms', d['duration_ms']);
      break;
    case 'tool.denied':
      if (context.gateDenial !== undefined) {
        // by: "policy" on the wire; the history's chain says it was the operator (the block message is the reason again)
        f.bare('denied by the operator (gate)', true);
        const reason = context.gateDenial.reason;
        if (reason !== undefined) f.out.push({ text: `reason=${JSON.stringify(clean(reason))}`, alarm: true });
      } else f.kv('by', d['by'], true).kv('rule', d['rule'], true);
      f.ms('duration_ms', d['duration_ms']);
      break;
    case 'attention.requested': {
      f.kv('kind', d['kind']);
      const options = Array.isArray(d['options']) ? d['options'].map((o) => rec(o)?.['id']).filter((i) => typeof i === 'string') : [];
      if (options.length > 0) f.kv('options', options.join('|'));
      f.text('prompt', d['prompt']);
      break;
    }
    case 'attention.answered':
      f.kv('option', rec(d['answer'])?.['option']).text('text', rec(d['answer'])?.['text']).kv('via', d['via']);
      break;
    case 'attention.resolved':
      f.kv('resolution', d['resolution']).ms('latency', d['latency_ms']);
      break;
    case 'attention.timeout':
      f.ms('after', d['after_ms']);
      break;
    case 'delegation.subagent.started':
    case 'delegation.subagent.stopped':
      // the child session is usually the subject already: named once
      if (str(child?.['session']) !== undefined && child?.['session'] !== subject) f.kv('child', shortId(String(child?.['session'])));
      f.kv('agent', child?.['agent']).kv('type', d['agent_type']).kv('role', d['role']).kv('status', d['status']).ms('duration_ms', d['duration_ms']);
      break;
    case 'x.hermes.model.call':
      f.kv('model', d['response_model'] ?? d['model'])
        .kv('call', d['api_call'])
        .ms('duration_ms', d['duration_ms'])
        .kv('finish', d['finish_reason']);
      totals(f, d);
      break;
    case 'x.hermes.api.error':
      f.kv('status', d['status_code'], true).kv('retry', d['retry_count']).kv('reason', d['reason'], true).text('message', d['error_message'], true);
      break;
    default:
      f.kv('status', d['status']).text('reason', d['reason']).ms('duration_ms', d['duration_ms']);
  }
  return f.out;
}

/** Tokens in and out, and the cost in USD, of a model call or a run's sum. */
function totals(f: { kv(key: string, v: unknown): unknown }, d: Record<string, unknown>): void {
  const cost = rec(d['cost']);
  f.kv('tokens_in', d['gen_ai.usage.input_tokens']);
  f.kv('tokens_out', d['gen_ai.usage.output_tokens']);
  f.kv('usd', cost?.['currency'] === 'USD' ? cost['total'] : undefined);
}
