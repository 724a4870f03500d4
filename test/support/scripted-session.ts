/**
 * A scripted Hermes session as the envelopes Hermes's dispatcher would write
 * to the shim's stdin, in firing order. Payload shapes follow the pinned
 * release (0.18.2); the ids follow its formats (`turn_id` =
 * `{session}:{task}:{uuid8}`). Content strings carry MARKER so capture tests
 * can prove none of it leaves the process.
 */
export const MARKER = 'PLANTEDxMARKER';
export const SENTINEL = 'hermes.observer.v1';

export interface Envelope {
  hook_event_name: string;
  tool_name: string | null;
  tool_input: Record<string, unknown> | null;
  session_id: string;
  cwd: string;
  extra: Record<string, unknown>;
}

export interface ScriptedSession {
  readonly session: string;
  readonly successor: string;
  readonly turns: readonly string[];
  readonly envelopes: readonly Envelope[];
}

export function scriptedSession(session = '20261129_101500_a1b2c3', cwd = `/home/dev/${MARKER}/proj`): ScriptedSession {
  const successor = `${session}_next`;
  const t1 = `${session}:task1:aaaa1111`;
  const t2 = `${session}:task2:bbbb2222`;
  const child = `${session}_sub1`;
  const env = (hook: string, extra: Record<string, unknown>, over: Partial<Envelope> = {}): Envelope => ({
    hook_event_name: hook,
    tool_name: null,
    tool_input: null,
    session_id: session,
    cwd,
    ...over,
    extra: { telemetry_schema_version: SENTINEL, ...extra },
  });
  const pre = (turn: string, id: string, tool: string, args: Record<string, unknown>) =>
    env('pre_tool_call', { tool_call_id: id, turn_id: turn, task_id: turn.split(':')[1], api_request_id: `req_${id}` }, { tool_name: tool, tool_input: args });
  const post = (turn: string, id: string, tool: string, extra: Record<string, unknown>) =>
    env('post_tool_call', { tool_call_id: id, turn_id: turn, task_id: turn.split(':')[1], ...extra }, { tool_name: tool, tool_input: null });
  // a finished model call as Hermes 0.18.2 reports it (post_api_request): the raw assistant object arrives str()-ed
  const modelCall = (turn: string, n: number, startedAt: number, content: string, calls: { id: string; name: string; args: object }[]) => {
    const toolCalls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } }));
    const usage = { input_tokens: 900 * n, output_tokens: 40 * n, cache_read_tokens: 300, cache_write_tokens: 100, reasoning_tokens: 8, request_count: 1 };
    return env('post_api_request', {
      task_id: turn.split(':')[1],
      turn_id: turn,
      api_request_id: `${turn}:api:${n}`,
      platform: 'cli',
      model: 'hermes-4',
      provider: 'custom',
      base_url: 'http://127.0.0.1:8080/v1',
      api_mode: 'chat_completions',
      api_call_count: n,
      api_duration: 1.25,
      started_at: startedAt,
      ended_at: startedAt + 1.25,
      finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
      message_count: 2 * n,
      response_model: 'hermes-4-0521',
      response: {
        model: 'hermes-4-0521',
        finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
        assistant_message: { role: 'assistant', content, tool_calls: toolCalls },
        usage: { ...usage, prompt_tokens: 900 * n + 400, total_tokens: 940 * n + 400 },
      },
      usage: { ...usage, prompt_tokens: 900 * n + 400, total_tokens: 940 * n + 400 },
      assistant_message: `ChatCompletionMessage(content='${content}', role='assistant', tool_calls=${JSON.stringify(toolCalls)})`,
      assistant_content_chars: content.length,
      assistant_tool_call_count: calls.length,
    });
  };
  const approval = (hook: string, extra: Record<string, unknown>) =>
    env(
      hook,
      {
        command: `rm -rf /tmp/${MARKER}`,
        description: 'recursive delete',
        pattern_key: 'rm_rf',
        pattern_keys: ['rm_rf'],
        session_key: session,
        surface: 'cli',
        ...extra,
      },
      { session_id: '' },
    );

  const envelopes: Envelope[] = [
    env('on_session_start', { model: 'hermes-4', platform: 'cli' }),
    // turn 1: a tool that works, one that fails, an approval answered, a clarify answered, a subagent
    env('pre_llm_call', {
      turn_id: t1,
      task_id: 'task1',
      user_message: `fix the build ${MARKER}`,
      conversation_history: [],
      is_first_turn: true,
      model: 'hermes-4',
      platform: 'cli',
    }),
    modelCall(t1, 1, 1795946100.5, `Let me run the tests ${MARKER}`, [{ id: 'call_ok', name: 'terminal', args: { command: `npm test ${MARKER}` } }]),
    pre(t1, 'call_ok', 'terminal', { command: `npm test ${MARKER}` }),
    post(t1, 'call_ok', 'terminal', { result: `{"output": "ok ${MARKER}", "exit_code": 0}`, duration_ms: 812.4, status: 'ok' }),
    pre(t1, 'call_err', 'read_file', { path: `/home/dev/${MARKER}.txt` }),
    post(t1, 'call_err', 'read_file', {
      result: `{"error": "no such file ${MARKER}"}`,
      duration_ms: 4,
      status: 'error',
      error_type: 'tool_error',
      error_message: `no such file ${MARKER}`,
    }),
    pre(t1, 'call_rm', 'terminal', { command: `rm -rf /tmp/${MARKER}` }),
    approval('pre_approval_request', {}),
    approval('post_approval_response', { choice: 'once' }),
    post(t1, 'call_rm', 'terminal', { result: '{"output": "", "exit_code": 0}', duration_ms: 2300, status: 'ok' }),
    pre(t1, 'call_ask', 'clarify', { question: `Which target ${MARKER}?`, choices: ['staging', `prod ${MARKER}`] }),
    post(t1, 'call_ask', 'clarify', {
      result: JSON.stringify({ question: `Which target ${MARKER}?`, choices_offered: ['staging', `prod ${MARKER}`], user_response: 'staging' }),
      duration_ms: 5100,
      status: 'ok',
    }),
    pre(t1, 'call_sub', 'delegate_task', { goal: `find the flaky test ${MARKER}` }),
    env('subagent_start', {
      parent_session_id: session,
      parent_turn_id: t1,
      child_session_id: child,
      child_role: 'leaf',
      child_goal: `find the flaky test ${MARKER}`,
    }),
    env('subagent_stop', {
      parent_session_id: session,
      parent_turn_id: t1,
      child_session_id: child,
      child_role: 'leaf',
      child_status: 'completed',
      child_summary: `found it ${MARKER}`,
      duration_ms: 5100,
    }),
    post(t1, 'call_sub', 'delegate_task', { result: `{"summary": "found it ${MARKER}"}`, duration_ms: 5200, status: 'ok' }),
    modelCall(t1, 2, 1795946160.25, `The build is fixed ${MARKER}`, []),
    env('on_session_end', { turn_id: t1, task_id: 'task1', completed: true, interrupted: false, model: 'hermes-4', platform: 'cli' }),
    // turn 2: a blocked tool, an approval denied, an API error, a clarify left hanging, an interrupt
    env('pre_llm_call', {
      turn_id: t2,
      task_id: 'task2',
      user_message: `now deploy ${MARKER}`,
      conversation_history: [{ role: 'user', content: MARKER }],
      is_first_turn: false,
      model: 'hermes-4',
      platform: 'cli',
    }),
    modelCall(t2, 1, 1795946200, '', [{ id: 'call_blk', name: 'terminal', args: { command: `curl ${MARKER} | sh` } }]),
    pre(t2, 'call_blk', 'terminal', { command: `curl ${MARKER} | sh` }),
    post(t2, 'call_blk', 'terminal', {
      result: `{"error": "Blocked by shell hook. ${MARKER}"}`,
      duration_ms: 1,
      status: 'blocked',
      error_type: 'plugin_block',
      error_message: `Blocked by shell hook. ${MARKER}`,
    }),
    pre(t2, 'call_rm2', 'terminal', { command: `rm -rf /tmp/${MARKER}` }),
    approval('pre_approval_request', {}),
    approval('post_approval_response', { choice: 'deny' }),
    post(t2, 'call_rm2', 'terminal', {
      result: `{"error": "denied ${MARKER}"}`,
      duration_ms: 900,
      status: 'error',
      error_type: 'tool_error',
      error_message: `denied ${MARKER}`,
    }),
    env('api_request_error', {
      turn_id: t2,
      task_id: 'task2',
      api_request_id: 'req_9',
      status_code: 429,
      retry_count: 3,
      reason: 'rate_limited',
      error: { type: 'RateLimitError', message: `slow down ${MARKER}` },
      provider: 'custom',
      model: 'hermes-4',
      platform: 'cli',
    }),
    pre(t2, 'call_ask2', 'clarify', { question: `Really deploy ${MARKER}?` }),
    env('on_session_end', { turn_id: t2, task_id: 'task2', completed: false, interrupted: true, model: 'hermes-4', platform: 'cli' }),
    // /new: finalize the dying session, then reset fires with the successor's id
    env('on_session_finalize', { reason: 'new_session', platform: 'cli' }),
    env('on_session_reset', { reason: 'new_session', platform: 'cli' }, { session_id: successor }),
    env('on_session_finalize', { reason: 'shutdown', platform: 'cli' }, { session_id: successor }),
  ];
  return { session, successor, turns: [t1, t2], envelopes };
}

/** One `pre_tool_call` body as the shim posts it (session s1, one turn): the request the daemon unit tests send. */
export function preToolCallBody(callId = 'c1', extra: Record<string, unknown> = {}, over: Record<string, unknown> = {}): string {
  return JSON.stringify({
    hook_event_name: 'pre_tool_call',
    tool_name: 'terminal',
    tool_input: { command: 'ls' },
    session_id: 's1',
    cwd: '/tmp',
    extra: { telemetry_schema_version: SENTINEL, tool_call_id: callId, turn_id: 's1:t:1', ...extra },
    ...over,
  });
}
