/**
 * The demo's scripted Hermes session: the envelopes Hermes's shell-hook
 * dispatcher would write to the shim's stdin, in firing order, shaped like
 * the ones recorded from Hermes 0.18.2 (fixtures/hermes-recorded/raw/:
 * tty-approval-once, tty-clarify, oneshot-model-calls,
 * oneshot-tool-error-read-file). One turn: a model call asks for two tools
 * (`ls`, which works, and a read of a missing file, which fails), a second
 * asks for `rm -rf build`, which Hermes's own approval prompt lets through
 * once, a third asks the user a question (clarify, answered), a fourth ends
 * the turn; then Hermes shuts the session down (finalize). Every string is
 * harmless and made up here: no secret, no path of this machine.
 */
import { randomBytes } from 'node:crypto';
import { TELEMETRY_SCHEMA_VERSION } from '../hermes/envelope.js';

export interface DemoEnvelope {
  readonly hook_event_name: string;
  readonly tool_name: string | null;
  readonly tool_input: Record<string, unknown> | null;
  readonly session_id: string;
  readonly cwd: string;
  readonly extra: Record<string, unknown>;
}

export interface DemoScript {
  readonly session: string;
  readonly turn: string;
  readonly envelopes: readonly DemoEnvelope[];
}

const CWD = '/home/demo/project';
const MODEL = 'demo-model';
const pad2 = (n: number) => String(n).padStart(2, '0');

/** `demo-YYYYMMDD_HHMMSS_xxxxxx` (UTC): Hermes's own session id shape, prefixed so nobody mistakes it for a real one. */
export function demoSessionId(now: Date = new Date(), suffix: string = randomBytes(3).toString('hex')): string {
  const d = now;
  const stamp = `${d.getUTCFullYear()}${pad2(d.getUTCMonth() + 1)}${pad2(d.getUTCDate())}_${pad2(d.getUTCHours())}${pad2(d.getUTCMinutes())}${pad2(d.getUTCSeconds())}`;
  return `demo-${stamp}_${suffix}`;
}

interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly args: Record<string, unknown>;
}

export function demoScript(session: string = demoSessionId(), now: Date = new Date()): DemoScript {
  // an interactive session's turn id: `{session}:{task}:{uuid8}`, the task being the session itself
  const turn = `${session}:${session}:${randomBytes(4).toString('hex')}`;
  const t0 = now.getTime() / 1000;
  const envelope = (hook: string, extra: Record<string, unknown>, over: Partial<DemoEnvelope> = {}): DemoEnvelope => ({
    hook_event_name: hook,
    tool_name: null,
    tool_input: null,
    session_id: session,
    cwd: CWD,
    ...over,
    extra: { ...extra, telemetry_schema_version: TELEMETRY_SCHEMA_VERSION },
  });
  const inTurn = { task_id: session, turn_id: turn };
  const request = (n: number) => `${turn}:api:${n}`;

  const modelCall = (n: number, offsetS: number, durationS: number, content: string, calls: readonly ToolCall[], tokens: { in: number; out: number }) => {
    const finish = calls.length > 0 ? 'tool_calls' : 'stop';
    const usage = {
      input_tokens: tokens.in,
      output_tokens: tokens.out,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
      request_count: 1,
      prompt_tokens: tokens.in,
      total_tokens: tokens.in + tokens.out,
    };
    const toolCalls = calls.map((c) => ({ id: c.id, name: c.name, arguments: JSON.stringify(c.args), provider_data: null }));
    return envelope('post_api_request', {
      ...inTurn,
      api_request_id: request(n),
      platform: 'cli',
      model: MODEL,
      provider: 'custom',
      base_url: 'http://127.0.0.1:8080/v1',
      api_mode: 'chat_completions',
      api_call_count: n,
      api_duration: durationS,
      started_at: t0 + offsetS,
      ended_at: t0 + offsetS + durationS,
      finish_reason: finish,
      message_count: 2 * n,
      response_model: MODEL,
      response: { model: MODEL, finish_reason: finish, assistant_message: { role: 'assistant', content, tool_calls: toolCalls }, usage },
      usage,
      assistant_message: `NormalizedResponse(content='${content}', tool_calls=None, finish_reason='${finish}')`,
      assistant_content_chars: content.length,
      assistant_tool_call_count: calls.length,
    });
  };
  const pre = (n: number, c: ToolCall) =>
    envelope('pre_tool_call', { ...inTurn, tool_call_id: c.id, api_request_id: request(n), middleware_trace: [] }, { tool_name: c.name, tool_input: c.args });
  const post = (n: number, c: ToolCall, outcome: { result: string; duration_ms: number; error?: string }) =>
    envelope(
      'post_tool_call',
      {
        result: outcome.result,
        ...inTurn,
        tool_call_id: c.id,
        api_request_id: request(n),
        duration_ms: outcome.duration_ms,
        status: outcome.error === undefined ? 'ok' : 'error',
        error_type: outcome.error === undefined ? null : 'tool_error',
        error_message: outcome.error ?? null,
        middleware_trace: [],
      },
      { tool_name: c.name, tool_input: c.args },
    );
  // Hermes's approval prompt: no session id on the envelope, the session in `session_key`
  const approval = (hook: string, c: ToolCall, more: Record<string, unknown>) =>
    envelope(
      hook,
      {
        command: String(c.args['command']),
        description: 'recursive delete',
        pattern_key: 'recursive delete',
        pattern_keys: ['recursive delete'],
        session_key: session,
        surface: 'cli',
        ...more,
        turn_id: turn,
        tool_call_id: c.id,
      },
      { session_id: '' },
    );

  const ls: ToolCall = { id: 'call_demo_ls', name: 'terminal', args: { command: 'ls' } };
  const read: ToolCall = { id: 'call_demo_read', name: 'read_file', args: { path: 'missing.txt' } };
  const rm: ToolCall = { id: 'call_demo_rm', name: 'terminal', args: { command: 'rm -rf build' } };
  const ask: ToolCall = { id: 'call_demo_ask', name: 'clarify', args: { question: 'Which colour should the chart use?', choices: ['red', 'green', 'blue'] } };

  const envelopes: DemoEnvelope[] = [
    envelope('on_session_start', { model: MODEL, platform: 'cli' }),
    envelope('pre_llm_call', {
      ...inTurn,
      user_message: 'Tidy up the project and draw the chart',
      conversation_history: [{ role: 'user', content: 'Tidy up the project and draw the chart' }],
      is_first_turn: true,
      model: MODEL,
      platform: 'cli',
      sender_id: '',
    }),
    modelCall(1, 0.1, 1.2, 'Let me look around first.', [ls, read], { in: 420, out: 38 }),
    pre(1, ls),
    post(1, ls, { result: '{"output": "README.md\\nbuild\\nsrc", "exit_code": 0, "error": null}', duration_ms: 41 }),
    pre(1, read),
    post(1, read, { result: '{"content": "", "error": "File not found: missing.txt"}', duration_ms: 3, error: 'File not found: missing.txt' }),
    modelCall(2, 1.5, 0.9, 'The build directory is stale; removing it.', [rm], { in: 610, out: 24 }),
    pre(2, rm),
    approval('pre_approval_request', rm, {}),
    approval('post_approval_response', rm, { choice: 'once' }),
    post(2, rm, {
      result: '{"output": "", "exit_code": 0, "error": null, "approval": "Command required approval (recursive delete) and was approved by the user."}',
      duration_ms: 2400,
    }),
    modelCall(3, 4.2, 0.8, 'One question before the chart.', [ask], { in: 700, out: 30 }),
    pre(3, ask),
    post(3, ask, {
      result: '{"question": "Which colour should the chart use?", "choices_offered": ["red", "green", "blue"], "user_response": "green"}',
      duration_ms: 5200,
    }),
    modelCall(4, 10.5, 1.1, 'Done: build removed, chart drawn in green.', [], { in: 820, out: 52 }),
    envelope('on_session_end', { ...inTurn, completed: true, interrupted: false, model: MODEL, platform: 'cli' }),
    envelope('on_session_finalize', { platform: 'cli', reason: 'shutdown' }),
  ];
  return { session, turn, envelopes };
}
