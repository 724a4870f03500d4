import { readFileSync } from 'node:fs';
import { request, type Agent } from 'node:http';
import path from 'node:path';
import { SENTINEL } from './scripted-session.js';

/**
 * Headers a raw `POST /hook` needs: JSON, plus the bearer token when the daemon
 * keeps one in its state dir (`hook-token`), so the same client works whether
 * or not the transport asks for it.
 */
export function hookHeaders(stateDir: string, body: string): Record<string, string | number> {
  const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
  try {
    const token = readFileSync(path.join(stateDir, 'hook-token'), 'utf8').trim();
    if (token) headers.authorization = `Bearer ${token}`;
  } catch {
    /* no token file: the transport does not ask for one */
  }
  return headers;
}

export interface HookReply {
  readonly status: number;
  readonly body: string;
}

/** POST one hook over `agent`; resolves with the status (0 when the connection failed) and the body. `extra`: more headers. */
export function postHook(url: string, agent: Agent | false, body: string, stateDir: string, extra: Record<string, string> = {}): Promise<HookReply> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', agent, headers: { ...hookHeaders(stateDir, body), ...extra } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve({ status: 0, body: '' }));
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end(body);
  });
}

/** One hook of a test workload: its envelope and the key of the ONE event it becomes. */
export interface KeyedHook {
  readonly session: string;
  readonly body: string;
  /** `type|call id or run` of the event this hook maps to */
  readonly key: string;
}

/** The key `KeyedHook.key` names, computed from an event read back from the log. */
export function eventKey(ev: { type: string; run?: string; data: Record<string, any> }): string {
  const call = ev.data?.tool?.call_id as string | undefined;
  return `${ev.type}|${call ?? ev.run ?? ''}`;
}

/**
 * A session whose every hook becomes exactly one event with a unique key:
 * start, one turn of `calls` tool calls (request + completion), turn end, finalize.
 */
export function keyedSession(sid: string, calls: number, pad = 0): KeyedHook[] {
  const turn = `${sid}:task0:00000000`;
  const env = (hook: string, extra: Record<string, unknown>, tool: string | null = null) =>
    JSON.stringify({
      hook_event_name: hook,
      tool_name: tool,
      tool_input: tool ? { command: 'x'.repeat(pad) } : null,
      session_id: sid,
      cwd: '/w',
      extra: { telemetry_schema_version: SENTINEL, ...extra },
    });
  const out: KeyedHook[] = [
    { session: sid, body: env('on_session_start', {}), key: 'session.started|' },
    { session: sid, body: env('pre_llm_call', { turn_id: turn, user_message: 'go' }), key: `run.started|${turn}` },
  ];
  for (let c = 0; c < calls; c++) {
    const id = `c${c}`;
    out.push({ session: sid, body: env('pre_tool_call', { turn_id: turn, tool_call_id: id }, 'terminal'), key: `tool.requested|${id}` });
    out.push({
      session: sid,
      body: env('post_tool_call', { turn_id: turn, tool_call_id: id, status: 'ok', result: 'r', duration_ms: 1 }, 'terminal'),
      key: `tool.completed|${id}`,
    });
  }
  out.push({ session: sid, body: env('on_session_end', { turn_id: turn, completed: true, interrupted: false }), key: `run.finished|${turn}` });
  out.push({ session: sid, body: env('on_session_finalize', {}), key: 'session.ended|' });
  return out;
}
