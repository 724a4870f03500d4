import fc from 'fast-check';
import { hookEnvelopeSchema, type HookEnvelope } from '../../../src/hermes/envelope.js';
import { SENTINEL } from '../../support/scripted-session.js';

/**
 * Random valid Hermes hook sequences for the identity property tests: a few
 * sessions interleaved, each with turns, tool calls (clarify with and without
 * a question among them), approvals inside tool calls (a person's card, or a
 * model's smart review), delegations, API errors, resets, session ends (and
 * resumed sessions finalized again), duplicate posts and unknown hooks.
 *
 * The generator draws abstract steps; `envelopes` plays them against a small
 * model of each session, so a post only ever names a call that is open, and
 * a step that does not apply right now is skipped.
 */
const OPS = [
  'start',
  'turn',
  'turnEnd',
  'tool',
  'tool',
  'toolPost',
  'toolPost',
  'dupPost',
  'approve',
  'approvePost',
  'delegStart',
  'delegStop',
  'apiError',
  'reset',
  'finalize',
  'unknown',
] as const;
type Op = (typeof OPS)[number];

export interface Step {
  readonly s: number;
  readonly op: Op;
  readonly k: number;
  readonly v: number;
}

export const steps = (max = 60): fc.Arbitrary<Step[]> =>
  fc.array(fc.record({ s: fc.nat(2), op: fc.constantFrom(...OPS), k: fc.nat(7), v: fc.nat(7) }), { minLength: 1, maxLength: max, size: 'max' });

interface Call {
  readonly id: string;
  readonly tool: string;
  readonly question: boolean;
}
interface Approval {
  readonly callId: string | undefined;
  readonly pattern: string;
  readonly smart: boolean;
  readonly turn: string | undefined;
}
interface Model {
  readonly sid: string;
  turn?: string;
  turns: number;
  calls: number;
  children: number;
  readonly open: Call[];
  readonly approvals: Approval[];
  readonly delegations: string[];
  lastPost?: Record<string, unknown>;
}

const TOOLS = ['terminal', 'read_file', 'clarify', 'clarify'];
const CHOICES = ['red', 'green', 'blue'];
const CLI_TIMEOUT = 'The user did not provide a response within the time limit. Use your best judgement to make the choice and proceed.';

/** What a clarify call returns, by `v`: an answer, a picked choice, a timeout, a cancel, nothing parseable. */
function clarifyResult(v: number): string {
  const r = (user_response: unknown) => JSON.stringify({ question: 'q', choices_offered: CHOICES, user_response });
  return [r('free text'), r('green'), r(CLI_TIMEOUT), r(''), 'not json', r(['red', 'blue']), r('[oneshot mode: no user available. x]'), r('blue')][v % 8]!;
}

/** Play the steps: the envelopes Hermes would have sent, in order. */
export function envelopes(plan: readonly Step[]): HookEnvelope[] {
  const models: Model[] = [0, 1, 2].map((i) => ({ sid: `2026_s${i}`, turns: 0, calls: 0, children: 0, open: [], approvals: [], delegations: [] }));
  const out: Record<string, unknown>[] = [];
  for (const { s, op, k, v } of plan) {
    const m = models[s]!;
    const env = (hook: string, extra: Record<string, unknown>, over: Record<string, unknown> = {}) => {
      const e = {
        hook_event_name: hook,
        tool_name: null,
        tool_input: null,
        session_id: m.sid,
        cwd: '/w',
        ...over,
        extra: { telemetry_schema_version: SENTINEL, ...extra },
      };
      out.push(e);
      return e;
    };
    const turn = m.turn !== undefined ? { turn_id: m.turn } : {};
    switch (op) {
      case 'start':
        env('on_session_start', { platform: 'cli', model: 'model-a' });
        break;
      case 'turn':
        m.turn = `${m.sid}:task:${++m.turns}`;
        env('pre_llm_call', { turn_id: m.turn, user_message: 'hello', model: 'model-a', platform: 'cli' });
        break;
      case 'turnEnd':
        if (m.turn === undefined) break;
        env('on_session_end', { turn_id: m.turn, completed: v % 3 !== 1, interrupted: v % 3 === 2 });
        m.turn = undefined;
        break;
      case 'tool': {
        const tool = TOOLS[k % TOOLS.length]!;
        const call: Call = { id: `call_${m.sid}_${++m.calls}`, tool, question: v % 3 !== 0 };
        const input = tool === 'clarify' ? { question: call.question ? 'which colour?' : '', choices: CHOICES } : { command: 'ls' };
        env('pre_tool_call', { ...turn, tool_call_id: call.id }, { tool_name: tool, tool_input: input });
        m.open.push(call);
        break;
      }
      case 'toolPost': {
        const call = m.open.splice(k % Math.max(1, m.open.length), 1)[0];
        if (!call) break;
        const status = ['ok', 'ok', 'error', 'blocked'][v % 4];
        const result = call.tool === 'clarify' ? clarifyResult(v + k) : 'done';
        m.lastPost = env('post_tool_call', { ...turn, tool_call_id: call.id, status, result, duration_ms: 5 + v }, { tool_name: call.tool });
        m.approvals.splice(0, m.approvals.length, ...m.approvals.filter((a) => a.callId !== call.id));
        break;
      }
      case 'dupPost':
        if (m.lastPost) out.push(m.lastPost);
        break;
      case 'approve': {
        const calls = m.open.filter((c) => c.tool !== 'clarify');
        const call = calls[k % Math.max(1, calls.length)];
        if (!call) break;
        const a: Approval = { callId: v % 5 === 0 ? undefined : call.id, pattern: ['rm_rf', 'sudo'][v % 2]!, smart: k % 4 === 0, turn: m.turn };
        env('pre_approval_request', approvalExtra(m, a), { session_id: '' });
        m.approvals.push(a);
        break;
      }
      case 'approvePost': {
        const a = m.approvals.splice(k % Math.max(1, m.approvals.length), 1)[0];
        if (!a) break;
        const choice = a.smart ? ['smart_approve', 'smart_deny'][v % 2] : ['once', 'session', 'always', 'deny', 'timeout'][v % 5];
        m.lastPost = env('post_approval_response', { ...approvalExtra(m, a), choice }, { session_id: '' });
        break;
      }
      case 'delegStart': {
        const child = `${m.sid}_child${++m.children}`;
        env('subagent_start', { parent_turn_id: m.turn, child_session_id: child, child_role: 'leaf' });
        m.delegations.push(child);
        break;
      }
      case 'delegStop': {
        const child = m.delegations.splice(k % Math.max(1, m.delegations.length), 1)[0];
        if (!child) break;
        env('subagent_stop', { parent_turn_id: m.turn, child_session_id: child, child_status: v % 2 ? 'completed' : 'failed', duration_ms: 40 });
        break;
      }
      case 'apiError':
        env('api_request_error', { ...turn, status_code: 429, reason: 'rate_limited', provider: 'prov', model: 'model-a' });
        break;
      case 'reset':
        env('on_session_reset', { reason: 'new_session' });
        break;
      case 'finalize':
        // the session may be resumed and finalized again later
        env('on_session_finalize', { reason: 'shutdown' });
        m.turn = undefined;
        break;
      case 'unknown':
        env('pre_verify', { ...turn });
        break;
    }
  }
  return out.map((e) => hookEnvelopeSchema.parse(e));
}

/** An approval payload: no session id, the session key, the pattern, the call it guards (when Hermes names it). */
function approvalExtra(m: Model, a: Approval): Record<string, unknown> {
  return {
    command: 'rm -rf /tmp/x',
    pattern_key: a.pattern,
    pattern_keys: [a.pattern],
    session_key: m.sid,
    surface: a.smart ? 'smart' : 'cli',
    ...(a.turn !== undefined ? { turn_id: a.turn } : {}),
    ...(a.callId !== undefined ? { tool_call_id: a.callId } : {}),
  };
}
