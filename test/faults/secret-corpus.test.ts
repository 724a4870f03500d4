/**
 * Fault: secrets reached the history through approval and clarify cards at the
 * default capture level (6 of 13 planted forms were written verbatim).
 *
 * The real path: every envelope goes through the real shim binary to the real
 * daemon process, with the OpenTelemetry mirror writing OTLP/JSON to a file and
 * carrying event data on spans (`AEP_OTEL_CAPTURE=redacted`). Every content
 * field Hermes sends carries the whole planted corpus (≥ 60 secrets, every
 * rule family of the secretlint recommended preset and every command-line
 * credential form). After a graceful stop, EVERY byte the daemon wrote (each
 * file under its log and state directories, the spans file included) and its
 * stderr are searched: no run of 10 characters of any planted secret may be
 * there, at any capture configuration. Ordinary commands must come through
 * byte for byte where content is captured. So are the daemon's answers: the
 * `GET /healthz` body, and its replies to hooks it refuses (bodies that carry
 * the corpus where a hook name, a field or the JSON itself is wrong).
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ORDINARY_COMMANDS, plantedSecrets, type PlantedSecret } from '../support/secret-corpus.js';
import { httpCall, runShim, startDaemonProcess, tempDir, type DaemonProcess } from '../support/processes.js';
import type { Envelope } from '../support/scripted-session.js';

const SENTINEL = 'hermes.observer.v1';
const SESSION = '20261201_090000_5ec7e7';
const T1 = `${SESSION}:task1:aaaa1111`;
const T2 = `${SESSION}:task2:bbbb2222`;

const plants = plantedSecrets();
const lines = plants.filter((p) => p.standalone !== true);
const standalone = plants.filter((p) => p.standalone === true);
/** Every line-shaped plant, one per line: the text each content field carries. */
const TEXT = lines.map((p) => p.line).join('\n');
/** A whole-document plant (the GCP service-account key file). */
const DOC = standalone[0]!.line;
const ORDINARY = ORDINARY_COMMANDS.join('\n');

/** Split the plants over the four clarify choices Hermes shows at most. */
function chunks(n: number): string[] {
  const size = Math.ceil(lines.length / n);
  return Array.from({ length: n }, (_, i) =>
    lines
      .slice(i * size, (i + 1) * size)
      .map((p) => p.line)
      .join('\n'),
  );
}

/** A Hermes session whose every content field carries the planted corpus. */
function plantedSession(): Envelope[] {
  const env = (hook: string, extra: Record<string, unknown>, over: Partial<Envelope> = {}): Envelope => ({
    hook_event_name: hook,
    tool_name: null,
    tool_input: null,
    session_id: SESSION,
    cwd: `/srv/work\n${TEXT}`,
    ...over,
    extra: { telemetry_schema_version: SENTINEL, ...extra },
  });
  const pre = (turn: string, id: string, tool: string, args: Record<string, unknown>) =>
    env('pre_tool_call', { tool_call_id: id, turn_id: turn, task_id: turn.split(':')[1] }, { tool_name: tool, tool_input: args });
  const post = (turn: string, id: string, tool: string, extra: Record<string, unknown>) =>
    env('post_tool_call', { tool_call_id: id, turn_id: turn, task_id: turn.split(':')[1], ...extra }, { tool_name: tool });
  const approval = (hook: string, id: string, command: string, extra: Record<string, unknown>) =>
    env(
      hook,
      {
        command,
        description: TEXT,
        pattern_key: 'dangerous command',
        pattern_keys: ['dangerous command'],
        session_key: SESSION,
        surface: 'cli',
        tool_call_id: id,
        turn_id: T1,
        ...extra,
      },
      { session_id: '' },
    );
  const choices = chunks(4);
  return [
    env('on_session_start', { model: 'hermes-4', platform: 'cli' }),
    env('pre_llm_call', {
      turn_id: T1,
      task_id: 'task1',
      user_message: TEXT,
      conversation_history: [{ role: 'user', content: TEXT }],
      is_first_turn: true,
      model: 'hermes-4',
      platform: 'cli',
    }),
    // a command gated by an approval card (the tracker's case), then run
    pre(T1, 'call_cmd', 'terminal', { command: TEXT, timeout: 30 }),
    approval('pre_approval_request', 'call_cmd', TEXT, {}),
    approval('post_approval_response', 'call_cmd', TEXT, { choice: 'once' }),
    post(T1, 'call_cmd', 'terminal', { result: JSON.stringify({ output: TEXT, exit_code: 0 }), duration_ms: 120, status: 'ok' }),
    // a whole key file written by a tool, failing with the corpus as its message
    pre(T1, 'call_write', 'write_file', { path: 'key.json', content: DOC, notes: TEXT }),
    post(T1, 'call_write', 'write_file', {
      result: JSON.stringify({ error: TEXT }),
      duration_ms: 3,
      status: 'error',
      error_type: 'tool_error',
      error_message: TEXT,
    }),
    // clarify with choices: question and labels carry the corpus, the human types free text
    pre(T1, 'call_ask', 'clarify', { question: TEXT, choices }),
    post(T1, 'call_ask', 'clarify', {
      result: JSON.stringify({ question: TEXT, choices_offered: choices, user_response: TEXT }),
      duration_ms: 900,
      status: 'ok',
    }),
    // open-ended clarify answered with a whole key file
    pre(T1, 'call_ask2', 'clarify', { question: 'Paste the service account key' }),
    post(T1, 'call_ask2', 'clarify', {
      result: JSON.stringify({ question: 'Paste the service account key', choices_offered: null, user_response: DOC }),
      duration_ms: 900,
      status: 'ok',
    }),
    // a command blocked by a policy hook whose block message quotes it (tool.denied.rule)
    pre(T1, 'call_blk', 'terminal', { command: TEXT }),
    post(T1, 'call_blk', 'terminal', {
      result: JSON.stringify({ error: `Blocked: ${TEXT}` }),
      duration_ms: 1,
      status: 'blocked',
      error_type: 'plugin_block',
      error_message: `Blocked: ${TEXT}`,
    }),
    // a second approval whose command is a whole key file, denied
    pre(T1, 'call_doc', 'terminal', { command: DOC }),
    approval('pre_approval_request', 'call_doc', DOC, {}),
    approval('post_approval_response', 'call_doc', DOC, { choice: 'deny' }),
    post(T1, 'call_doc', 'terminal', {
      result: JSON.stringify({ error: 'denied' }),
      duration_ms: 1,
      status: 'error',
      error_type: 'tool_error',
      error_message: DOC,
    }),
    env('api_request_error', {
      turn_id: T1,
      task_id: 'task1',
      status_code: 401,
      retry_count: 0,
      reason: 'auth_failed',
      error: { type: 'AuthenticationError', message: TEXT },
      provider: 'custom',
      model: 'hermes-4',
      platform: 'cli',
    }),
    env('subagent_start', { parent_session_id: SESSION, parent_turn_id: T1, child_session_id: `${SESSION}_sub`, child_role: 'leaf', child_goal: TEXT }),
    env('subagent_stop', {
      parent_session_id: SESSION,
      parent_turn_id: T1,
      child_session_id: `${SESSION}_sub`,
      child_role: 'leaf',
      child_status: 'completed',
      child_summary: TEXT,
      duration_ms: 50,
    }),
    env('on_session_end', { turn_id: T1, task_id: 'task1', completed: true, interrupted: false }),
    // turn 2: ordinary commands, which must come through untouched where content is captured
    env('pre_llm_call', { turn_id: T2, task_id: 'task2', user_message: ORDINARY, conversation_history: [], is_first_turn: false }),
    pre(T2, 'call_plain', 'terminal', { command: ORDINARY }),
    approval('pre_approval_request', 'call_plain', ORDINARY, { turn_id: T2 }),
    approval('post_approval_response', 'call_plain', ORDINARY, { turn_id: T2, choice: 'session' }),
    post(T2, 'call_plain', 'terminal', { result: ORDINARY, duration_ms: 5, status: 'ok' }),
    env('on_session_end', { turn_id: T2, task_id: 'task2', completed: true, interrupted: false }),
    env('on_session_finalize', { reason: 'shutdown', platform: 'cli' }),
  ];
}

/** Hook bodies the daemon refuses or cannot map, each carrying the corpus where it is wrong. */
function badHooks(): string[] {
  return [
    // not JSON: cut in the middle of the corpus
    `{"hook_event_name":"pre_tool_call","session_id":"${SESSION}","tool_input":{"command":"${TEXT.replace(/["\\\n]/g, ' ')}`,
    // JSON, not an object
    JSON.stringify([TEXT, DOC]),
    // a hook name that is the corpus
    JSON.stringify({ hook_event_name: TEXT, session_id: SESSION, extra: { telemetry_schema_version: SENTINEL } }),
    // fields of the wrong type, carrying the corpus
    JSON.stringify({ hook_event_name: 'pre_tool_call', session_id: { secret: TEXT }, tool_name: [DOC], tool_input: TEXT, extra: TEXT }),
    JSON.stringify({ hook_event_name: 'post_tool_call', session_id: SESSION, tool_name: 'terminal', extra: { tool_call_id: { x: TEXT }, duration_ms: TEXT } }),
    // a drift sentinel that is a secret shaped like an identifier (the daemon reports an unexpected sentinel)
    ...plants
      .filter((p) => /^[A-Za-z0-9._:-]{1,64}$/.test(p.secret))
      .map((p) => JSON.stringify({ hook_event_name: 'on_session_start', session_id: `${SESSION}_drift`, extra: { telemetry_schema_version: p.secret } })),
  ];
}

const WINDOW = 10;

/** Every 10-character run of every planted secret, mapped to the plant it belongs to. */
function secretWindows(ps: readonly PlantedSecret[]): Map<string, string> {
  const windows = new Map<string, string>();
  for (const p of ps) {
    expect(p.secret.length, `${p.id} secret too short to search by windows`).toBeGreaterThanOrEqual(WINDOW);
    for (let i = 0; i + WINDOW <= p.secret.length; i++) windows.set(p.secret.slice(i, i + WINDOW), `${p.id} (${p.family})`);
  }
  return windows;
}

/** The plants any part of which appears in `haystack`, each with where. */
function leaked(haystack: string, windows: Map<string, string>): string[] {
  const found = new Set<string>();
  for (let i = 0; i + WINDOW <= haystack.length; i++) {
    const hit = windows.get(haystack.slice(i, i + WINDOW));
    if (hit !== undefined) found.add(hit);
  }
  return [...found].sort();
}

/** Every file under `dir`, recursively: whatever egress a future change adds there is searched too. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    // the spool holds raw envelopes awaiting delivery (the shim's queue, not the history); with the
    // daemon up it stays empty, and anything left there is still searched by the assertion below
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out.sort();
}

interface Config {
  readonly name: string;
  readonly env: Record<string, string>;
  /** Where content is captured at `redacted`: the plants' tags must arrive there. */
  readonly contentIn: 'everything' | 'attention' | 'nothing';
}

const CONFIGS: readonly Config[] = [
  { name: 'default (capture metadata, attention redacted)', env: {}, contentIn: 'attention' },
  { name: 'capture redacted everywhere', env: { AEP_CAPTURE: 'redacted' }, contentIn: 'everything' },
  { name: 'capture metadata everywhere', env: { AEP_CAPTURE_ATTENTION: 'metadata' }, contentIn: 'nothing' },
];

let daemon: DaemonProcess | undefined;
let base: string | undefined;
afterEach(async () => {
  await daemon?.kill();
  daemon = undefined;
  if (base !== undefined) rmSync(base, { recursive: true, force: true });
  base = undefined;
});

describe('planted secrets never reach the history, the spans, stderr, /healthz or an error reply', () => {
  it('the corpus plants at least 60 secrets and 40 ordinary commands', () => {
    expect(plants.length).toBeGreaterThanOrEqual(60);
    expect(ORDINARY_COMMANDS.length).toBeGreaterThanOrEqual(40);
    expect(new Set(plants.map((p) => p.id)).size).toBe(plants.length);
  });

  for (const config of CONFIGS) {
    it(config.name, async () => {
      const dir = tempDir('hermes-aep-secrets-');
      base = dir;
      const spansFile = path.join(dir, 'otel', 'spans.jsonl');
      daemon = await startDaemonProcess(
        {
          ...config.env,
          AEP_OTEL_CAPTURE: 'redacted',
          OTEL_TRACES_EXPORTER: 'file',
          AEP_OTEL_FILE: spansFile,
          OTEL_BSP_SCHEDULE_DELAY: '50',
          AEP_DEBUG: 'true',
        },
        { historyDir: path.join(dir, 'log'), stateDir: path.join(dir, 'state') },
      );
      const shimEnv = { AEP_HOOK_URL: daemon.hookUrl, AEP_STATE_DIR: daemon.stateDir };
      for (const envelope of plantedSession()) {
        const r = await runShim(JSON.stringify(envelope), shimEnv);
        expect(r.code).toBe(0);
        expect(r.stdout.trim()).toBe('{}');
      }
      const health = await daemon.health();
      expect(health.hooks_failed ?? 0).toBe(0);
      // the daemon's own answers: to hooks it refuses, then /healthz (which counts them)
      const replies: string[] = [];
      for (const body of badHooks()) {
        const r = await httpCall(
          { url: daemon.url },
          { method: 'POST', path: '/hook', headers: { ...daemon.authHeaders, 'content-type': 'application/json' }, body },
        );
        replies.push(`${r.status} ${JSON.stringify(r.headers)} ${r.body}`);
      }
      expect(replies.filter((r) => /^4\d\d /.test(r)).length, 'bad hooks refused with a 4xx').toBeGreaterThanOrEqual(2);
      const healthz = await httpCall({ url: daemon.url }, { path: '/healthz' });
      expect(healthz.body).toContain('"hooks"');
      expect(await daemon.stop()).toBe(0);

      const written = [...filesUnder(daemon.historyDir), ...filesUnder(daemon.stateDir), ...filesUnder(path.dirname(spansFile))];
      const history = written.filter((f) => f.endsWith('.jsonl') && f.includes(`${path.sep}hermes${path.sep}`));
      expect(history.length).toBeGreaterThan(0);
      expect(existsSync(spansFile)).toBe(true);

      const windows = secretWindows(plants);
      const sources: Array<[string, string]> = [
        ...[...new Set(written)].map((f): [string, string] => [f, readFileSync(f, 'utf8')]),
        ['stderr', daemon.stderr()],
        ['/hook error replies', replies.join('\n')],
        ['GET /healthz', healthz.body],
      ];
      const leaks = sources.flatMap(([where, text]) =>
        leaked(text, windows).map((p) => `${p} in ${path.isAbsolute(where) ? path.relative(dir, where) : where}`),
      );
      expect(leaks, 'planted secrets written out').toEqual([]);

      // Positive evidence: content really travelled the path, so "nothing leaked" is not "nothing arrived".
      const log = history.map((f) => readFileSync(f, 'utf8')).join('');
      const spans = readFileSync(spansFile, 'utf8');
      const events = log
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; data?: Record<string, unknown> });
      expect(events.some((e) => e.type === 'attention.requested')).toBe(true);
      const tags = lines.map((p) => `${p.id} `);
      const missing = (text: string) => tags.filter((t) => !text.includes(t));
      if (config.contentIn === 'nothing') {
        expect(tags.filter((t) => log.includes(t) || spans.includes(t))).toEqual([]);
        expect(spans).not.toContain('aep.data');
      } else {
        expect(missing(log), 'plants whose line never reached the history').toEqual([]);
        expect(log).toContain('[REDACTED:secret]');
        expect(spans).toContain('aep.data');
        expect(spans).toContain('[REDACTED:secret]');
        const cards = events.filter((e) => e.type.startsWith('attention.')).map((e) => JSON.stringify(e));
        expect(missing(cards.join('\n')), 'plants whose line never reached a card').toEqual([]);
        // ordinary commands come through byte for byte (JSON-escaped in the log)
        const plainIn = config.contentIn === 'everything' ? log : cards.join('\n');
        const mangled = ORDINARY_COMMANDS.filter((c) => !plainIn.includes(JSON.stringify(c).slice(1, -1)));
        expect(mangled, 'ordinary commands changed by redaction').toEqual([]);
      }
      if (config.contentIn === 'everything') {
        const toolData = events
          .filter((e) => e.type.startsWith('tool.') || e.type === 'run.started' || e.type === 'x.hermes.api.error')
          .map((e) => JSON.stringify(e));
        expect(missing(toolData.join('\n')), 'plants whose line never reached a tool, run or error event').toEqual([]);
      }
    });
  }
});
