import { traceIdFor } from '../../src/otel/ids.js';
import { SENTINEL } from './scripted-session.js';

/**
 * The fleet's turns and the arithmetic its tests share (the e2e fleet of processes, test/e2e/fleet.test.ts, and
 * the compose fleet, test/compose/fleet.test.ts): one Hermes session of one turn per trace, shaped to be kept
 * (an error, a denial, a human wait) or to be sampled (plain), and the exact binomial bound the sampled count
 * must fall in.
 */

export type Kind = 'error' | 'denied' | 'approval' | 'plain';
/** per host: 3 error, 3 denied, 3 approval, 16 plain (64 plain in all: the binomial sample) */
export const kindOf = (i: number): Kind => (['error', 'denied', 'approval'] as const)[i % 10] ?? 'plain';

export interface Session {
  readonly host: number;
  readonly sid: string;
  readonly run: string;
  readonly kind: Kind;
  readonly traceId: string;
  readonly bodies: string[];
}

/** One Hermes session of one turn as the envelopes the shim posts: two tool calls, the second shaped by `kind`. */
export function session(runTag: string, host: number, i: number): Session {
  const kind = kindOf(i);
  const sid = `20261201_120000_${runTag}_h${host}_${String(i).padStart(2, '0')}`;
  const run = `${sid}:task0:0000f1ee`;
  const env = (hook: string, extra: Record<string, unknown>, over: Record<string, unknown> = {}) =>
    JSON.stringify({
      hook_event_name: hook,
      tool_name: null,
      tool_input: null,
      session_id: sid,
      cwd: '/w',
      ...over,
      extra: { telemetry_schema_version: SENTINEL, ...extra },
    });
  const pre = (id: string) => env('pre_tool_call', { turn_id: run, tool_call_id: id }, { tool_name: 'terminal', tool_input: { command: 'make' } });
  const post = (id: string, extra: Record<string, unknown>) =>
    env('post_tool_call', { turn_id: run, tool_call_id: id, duration_ms: 3, ...extra }, { tool_name: 'terminal' });
  const approval = (hook: string, extra: Record<string, unknown>) =>
    env(
      hook,
      { command: 'rm -rf /tmp/x', description: 'recursive delete', pattern_key: 'rm_rf', pattern_keys: ['rm_rf'], session_key: sid, surface: 'cli', ...extra },
      { session_id: '' },
    );
  const bodies = [
    env('on_session_start', {}),
    env('pre_llm_call', { turn_id: run, user_message: 'build it' }),
    pre('c0'),
    post('c0', { status: 'ok', result: 'ok' }),
    pre('c1'),
  ];
  if (kind === 'error') bodies.push(post('c1', { status: 'error', error_type: 'tool_error', error_message: 'exit 2' }));
  else if (kind === 'denied') bodies.push(post('c1', { status: 'blocked', error_type: 'plugin_block', error_message: 'blocked' }));
  else if (kind === 'approval')
    bodies.push(approval('pre_approval_request', {}), approval('post_approval_response', { choice: 'once' }), post('c1', { status: 'ok', result: 'ok' }));
  else bodies.push(post('c1', { status: 'ok', result: 'ok' }));
  bodies.push(env('on_session_end', { turn_id: run, completed: true, interrupted: false }), env('on_session_finalize', {}));
  return { host, sid, run, kind, traceId: traceIdFor(sid, run), bodies };
}

/** Sum of a Prometheus counter's samples whose labels include every `want` pair. */
export function counter(text: string, name: string, want: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labels = /\{([^}]*)\}/.exec(line)?.[1] ?? '';
    if (Object.entries(want).every(([k, v]) => labels.includes(`${k}="${v}"`))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** P(X = k) for X ~ Binomial(n, p), in log space (exact enough for n in the hundreds). */
function binomPmf(n: number, k: number, p: number): number {
  let logC = 0;
  for (let j = 1; j <= k; j++) logC += Math.log(n - k + j) - Math.log(j);
  return Math.exp(logC + k * Math.log(p) + (n - k) * Math.log(1 - p));
}

/** The narrowest [lo, hi] symmetric in tail mass with P(X < lo) + P(X > hi) <= alpha. */
export function binomialBounds(n: number, p: number, alpha: number): [number, number] {
  let lo = 0;
  let tail = 0;
  while (lo < n && tail + binomPmf(n, lo, p) <= alpha / 2) tail += binomPmf(n, lo++, p);
  let hi = n;
  tail = 0;
  while (hi > 0 && tail + binomPmf(n, hi, p) <= alpha / 2) tail += binomPmf(n, hi--, p);
  return [lo, hi];
}
