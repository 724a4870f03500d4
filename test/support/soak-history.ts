import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { monotonicFactory } from 'ulid';
import { defaultPolicy } from '../../src/capture/policy.js';
import type { HookEnvelope } from '../../src/hermes/envelope.js';
import { IdentityStage } from '../../src/identity/identity-stage.js';
import { readHook } from '../../src/mapping/map-hook.js';
import { safeFileName } from '../../src/history/safe-file-name.js';
import { SpanContextStage } from '../../src/otel/span-context-stage.js';
import { SpanBuilder } from '../../src/otel/span-builder.js';
import { SENTINEL, type Envelope } from './scripted-session.js';

/**
 * A soak history, written fast and directly as the daemon would have written
 * it: every hook goes through the real mapping, identity stage and span
 * builder (for `traceparent`) in global time order, and the events land in
 * `{historyDir}/hermes/{session}.jsonl` with the state dir the daemon keeps
 * (`epoch`, `ended-sessions`). Most sessions run to their finalize; a few are
 * cut mid-turn (an open run, tool, clarify card, approval card or
 * delegation), and `rest` holds the hooks that would have finished them.
 */
export interface SoakHistory {
  readonly historyDir: string;
  readonly stateDir: string;
  readonly files: number;
  readonly events: number;
  readonly bytes: number;
  /** the hooks a session cut mid-turn still has to fire, by session id */
  readonly rest: ReadonlyMap<string, readonly Envelope[]>;
  /** sessions that ran to their finalize */
  readonly ended: readonly string[];
  /** the newest event time in the history */
  readonly lastMs: number;
}

export interface SoakOptions {
  /** root: `{root}/log` and `{root}/state` */
  readonly root: string;
  readonly sessions: number;
  /** all event times fall in [nowMs - spanMs, nowMs - tailMs] */
  readonly nowMs?: number;
  readonly spanMs?: number;
  readonly tailMs?: number;
  /** the step between one session's hooks */
  readonly stepMs?: number;
}

type Cut = 'none' | 'tool' | 'clarify' | 'approval' | 'delegation' | 'unfinalized';

/** Which sessions are left open, and how: deterministic by index. */
export function cutOf(i: number): Cut {
  if (i % 50 === 7) return 'tool';
  if (i % 97 === 11) return 'clarify';
  if (i % 89 === 13) return 'approval';
  if (i % 83 === 17) return 'delegation';
  if (i % 31 === 19) return 'unfinalized';
  return 'none';
}

/** One live Hermes hook envelope of session `sid` (the drift sentinel in `extra`). */
export function soakEnvelope(sid: string, hook: string, extra: Record<string, unknown>, over: Partial<Envelope> = {}): Envelope {
  return {
    hook_event_name: hook,
    tool_name: null,
    tool_input: null,
    session_id: sid,
    cwd: '/home/dev/proj',
    ...over,
    extra: { telemetry_schema_version: SENTINEL, ...extra },
  };
}

/** One session's hooks in firing order, and the index where a cut session stops. */
export function soakSession(sid: string, i: number): { hooks: Envelope[]; cutAt: number } {
  const env = (hook: string, extra: Record<string, unknown>, over: Partial<Envelope> = {}): Envelope => soakEnvelope(sid, hook, extra, over);
  const cut = cutOf(i);
  // what turn 2 does besides plain tools: the cut's own unit, else one by index
  const extraKind = cut === 'none' || cut === 'unfinalized' ? (['plain', 'clarify', 'approval', 'delegation', 'apierror'] as const)[i % 5]! : cut;
  const hooks: Envelope[] = [env('on_session_start', { model: 'hermes-4', platform: 'cli' })];
  let cutAt = -1;
  const mark = () => {
    cutAt = hooks.length;
  };
  for (let t = 0; t < 2; t++) {
    const turn = `${sid}:task${t}:${(i * 7 + t).toString(16).padStart(8, '0')}`;
    const x = { turn_id: turn, task_id: `task${t}` };
    hooks.push(
      env('pre_llm_call', {
        ...x,
        user_message: `step ${t} of job ${i}`,
        conversation_history: [],
        is_first_turn: t === 0,
        model: 'hermes-4',
        platform: 'cli',
      }),
    );
    const tool = (id: string, name: string, args: Record<string, unknown>, ok = true) => {
      hooks.push(env('pre_tool_call', { ...x, tool_call_id: id, api_request_id: `req_${id}` }, { tool_name: name, tool_input: args }));
      return () =>
        hooks.push(
          env(
            'post_tool_call',
            {
              ...x,
              tool_call_id: id,
              result: ok ? '{"output": "ok", "exit_code": 0}' : '{"error": "failed"}',
              duration_ms: 40 + (i % 17),
              status: ok ? 'ok' : 'error',
              ...(ok ? {} : { error_type: 'tool_error', error_message: 'failed' }),
            },
            { tool_name: name, tool_input: null },
          ),
        );
    };
    for (let c = 0; c < (t === 0 ? 6 : 5); c++)
      tool(
        `call_${t}_${c}`,
        c % 2 ? 'read_file' : 'terminal',
        c % 2 ? { path: `/home/dev/proj/f${c}.ts` } : { command: `npm test -- ${c}` },
        (i + c) % 9 !== 0,
      )();
    if (t === 1) {
      if (extraKind === 'tool') {
        const done = tool('call_open', 'terminal', { command: 'sleep 600' });
        mark();
        done();
      } else if (extraKind === 'clarify') {
        const id = `call_ask_${t}`;
        const q = { question: 'Which target?', choices: ['staging', 'prod'] };
        hooks.push(env('pre_tool_call', { ...x, tool_call_id: id }, { tool_name: 'clarify', tool_input: q }));
        if (cut === 'clarify') mark();
        hooks.push(
          env(
            'post_tool_call',
            { ...x, tool_call_id: id, result: JSON.stringify({ ...q, choices_offered: q.choices, user_response: 'staging' }), duration_ms: 3000, status: 'ok' },
            { tool_name: 'clarify' },
          ),
        );
      } else if (extraKind === 'approval') {
        const id = `call_rm_${t}`;
        const done = tool(id, 'terminal', { command: 'rm -rf /tmp/build' });
        const ap = (hook: string, extra: Record<string, unknown>) =>
          env(
            hook,
            {
              command: 'rm -rf /tmp/build',
              description: 'recursive delete',
              pattern_key: 'rm_rf',
              pattern_keys: ['rm_rf'],
              session_key: sid,
              surface: 'cli',
              ...extra,
            },
            { session_id: '' },
          );
        hooks.push(ap('pre_approval_request', {}));
        if (cut === 'approval') mark();
        hooks.push(ap('post_approval_response', { choice: 'once' }));
        done();
      } else if (extraKind === 'delegation') {
        const child = `${sid}_sub`;
        const done = tool('call_sub', 'delegate_task', { goal: 'look around' });
        const sx = { parent_session_id: sid, parent_turn_id: turn, child_session_id: child, child_role: 'leaf' };
        hooks.push(env('subagent_start', { ...sx, child_goal: 'look around' }));
        if (cut === 'delegation') mark();
        hooks.push(env('subagent_stop', { ...sx, child_status: 'completed', child_summary: 'done', duration_ms: 2000 }));
        done();
      } else if (extraKind === 'apierror') {
        hooks.push(
          env('api_request_error', {
            ...x,
            api_request_id: 'req_e',
            status_code: 429,
            retry_count: 1,
            reason: 'rate_limited',
            error: { type: 'RateLimitError', message: 'slow down' },
            provider: 'custom',
            model: 'hermes-4',
            platform: 'cli',
          }),
        );
      }
    }
    hooks.push(env('on_session_end', { ...x, completed: true, interrupted: false, model: 'hermes-4', platform: 'cli' }));
  }
  if (cut === 'unfinalized') mark();
  hooks.push(env('on_session_finalize', { reason: 'shutdown', platform: 'cli' }));
  return { hooks, cutAt: cut === 'none' ? hooks.length : cutAt };
}

export function soakSessionId(i: number): string {
  return `20261130_${String(100000 + i)}_soak${((i * 2654435761) >>> 0).toString(16).padStart(8, '0')}`;
}

export interface SoakSchedule {
  readonly sessions: { sid: string; hooks: Envelope[]; cutAt: number }[];
  /** every hook a session fires before its cut, in global time order */
  readonly timeline: { t: number; s: number; k: number }[];
}

/** `n` sessions started evenly over [nowMs - spanMs, nowMs - tailMs - their length], hooks `step` apart, merged in time order. */
export function soakSchedule(n: number, nowMs: number, spanMs: number, tailMs: number, step: number, first = 0): SoakSchedule {
  const sessions = Array.from({ length: n }, (_, j) => {
    const i = first + j;
    return { sid: soakSessionId(i), ...soakSession(soakSessionId(i), i) };
  });
  const longest = Math.max(...sessions.map((s) => s.hooks.length));
  const startSpan = Math.max(1, spanMs - tailMs - longest * step);
  const timeline: { t: number; s: number; k: number }[] = [];
  sessions.forEach((s, i) => {
    const start = nowMs - spanMs + Math.floor((i / n) * startSpan);
    for (let k = 0; k < s.cutAt; k++) timeline.push({ t: start + k * step, s: i, k });
  });
  timeline.sort((a, b) => a.t - b.t || a.s - b.s || a.k - b.k);
  return { sessions, timeline };
}

/** Write the history; returns where it is and what it holds. */
export function writeSoakHistory(o: SoakOptions): SoakHistory {
  const nowMs = o.nowMs ?? Date.now();
  const spanMs = o.spanMs ?? 40 * 60_000;
  const tailMs = o.tailMs ?? 60_000;
  const step = o.stepMs ?? 150;
  const historyDir = path.join(o.root, 'log');
  const stateDir = path.join(o.root, 'state');
  mkdirSync(path.join(historyDir, 'hermes'), { recursive: true, mode: 0o700 });
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });

  const { sessions, timeline } = soakSchedule(o.sessions, nowMs, spanMs, tailMs, step);

  const ulid = monotonicFactory();
  const policy = defaultPolicy({ home: '/home/dev' });
  const identity = new IdentityStage({ epoch: 0, host: 'soak-host', policy, newId: () => ulid(), maxSessions: o.sessions + 16 });
  const builder = new SpanBuilder({ sampler: () => true, ceiling: 'metadata', maxOpenUnits: o.sessions + 16 });
  const stamp = new SpanContextStage({ assign: (ev) => builder.accept(ev).ctx });
  const lines = new Map<string, string[]>();
  let events = 0;
  let bytes = 0;
  let lastMs = 0;
  let files = 0;
  const flush = (session: string) => {
    const l = lines.get(session);
    if (!l) return;
    lines.delete(session);
    files++;
    writeFileSync(path.join(historyDir, 'hermes', `${safeFileName(session)}.jsonl`), l.join(''), { mode: 0o600 });
  };
  for (const { t, s, k } of timeline) {
    const env = sessions[s]!.hooks[k]! as unknown as HookEnvelope;
    for (const ev of stamp.process(identity.process(readHook(env, policy), new Date(t)))) {
      const line = `${JSON.stringify(ev)}\n`;
      let file = lines.get(ev.session);
      if (!file) lines.set(ev.session, (file = []));
      file.push(line);
      events++;
      bytes += line.length;
      lastMs = Math.max(lastMs, t);
    }
    // a session's last hook: its file is complete (approvals ride their session's lane)
    if (k === sessions[s]!.cutAt - 1) flush(sessions[s]!.sid);
  }
  for (const session of [...lines.keys()]) flush(session);
  const ended = sessions.filter((s) => s.cutAt === s.hooks.length).map((s) => s.sid);
  writeFileSync(path.join(stateDir, 'epoch'), '0\n', { mode: 0o600 });
  writeFileSync(path.join(stateDir, 'ended-sessions'), ended.map((id) => `${JSON.stringify(id)}\n`).join(''), { mode: 0o600 });
  const rest = new Map<string, Envelope[]>();
  for (const s of sessions) if (s.cutAt < s.hooks.length) rest.set(s.sid, s.hooks.slice(s.cutAt));
  return { historyDir, stateDir, files, events, bytes, rest, ended, lastMs };
}
