/**
 * One terminal line per AEP event: local time, short session, short run,
 * the type indented by nesting (session events flush left, run events under
 * them, tool events under their run), the subject, then the payload facts
 * `facts.ts` admits. Envelope attributes and `data` members are the only
 * inputs: what the event does not carry is never shown.
 */
import { clean, factsOf, shortId, type FactContext } from './facts.js';
import type { Role, Styler } from './color.js';

type Ev = Readonly<Record<string, unknown>>;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

const SESSION_COL = 8;
const RUN_COL = 8;
/** the agent this daemon emits for: its name is not repeated on every line */
const HOME_AGENT = 'hermes';

const pad2 = (n: number) => String(n).padStart(2, '0');

/** `HH:MM:SS.mmm` in the local time zone; `--:--:--.---` when `time` is not a timestamp. */
export function clock(time: unknown): string {
  const d = typeof time === 'string' ? new Date(time) : undefined;
  if (d === undefined || Number.isNaN(d.getTime())) return '--:--:--.---';
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

/** 0: session level; 1: inside a run; 2: a tool call inside a run */
export function depthOf(ev: Ev): number {
  const type = str(ev['type']) ?? '';
  if (str(ev['run']) === undefined) return 0;
  return type.startsWith('tool.') ? 2 : 1;
}

const ULID = /^[0-9A-Z]{26}$/;
const FAILURE = /(^|\.)(failed|denied|cancelled)$|^error\./;

function typeRole(type: string, severity: unknown): Role {
  if (FAILURE.test(type) || severity === 'error' || severity === 'critical') return 'failure';
  if (severity === 'warning') return 'warning';
  if (type.startsWith('attention.')) return 'attention';
  if (type.startsWith('tool.')) return 'tool';
  if (type.startsWith('run.')) return 'run';
  if (type.startsWith('session.')) return 'session';
  if (severity === 'notice') return 'notice';
  return 'plain';
}

/** One event's line; `extra` (already styled) ends it: what `tail` itself adds, e.g. a card's id and time left. */
export function renderEvent(ev: Ev, style: Styler, extra: readonly string[] = [], context: FactContext = {}): string {
  const type = clean(str(ev['type']) ?? '?', 60);
  const session = str(ev['session']);
  const run = str(ev['run']);
  const agent = str(ev['agent']);
  const sessionCol = session !== undefined ? clean(shortId(session, SESSION_COL), 16) : `(${clean(agent ?? '?', 24)})`;
  const runCol = run !== undefined ? clean(shortId(run, RUN_COL), 16) : '';
  const parts = [
    style('time', clock(ev['time'])),
    style('session', sessionCol.padEnd(SESSION_COL)),
    style('run', runCol.padEnd(RUN_COL)),
    '  '.repeat(depthOf(ev)) + style(typeRole(type, ev['severity']), type),
  ];
  const subject = str(ev['subject']);
  // an event id as subject (an attention outcome names its request) is shortened: its tail tells requests apart
  if (subject !== undefined) parts.push(ULID.test(subject) ? `…${subject.slice(-6)}` : clean(subject, 48));
  for (const f of factsOf(ev, context)) parts.push(f.alarm ? style('failure', f.text) : f.text);
  if (agent !== undefined && agent !== HOME_AGENT) parts.push(style('dim', `@${clean(agent, 32)}`));
  parts.push(...extra);
  return parts.join(' ');
}

/** A line about the stream itself (a replay gap, a reconnect), set apart from events. */
export function renderNotice(text: string, style: Styler): string {
  return style('dim', `-- ${clean(text, 200)}`);
}
