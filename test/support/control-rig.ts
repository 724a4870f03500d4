import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { ulid } from 'ulid';
import { readSettings } from '../../src/daemon/settings.js';
import { silentLogger } from '../../src/core/logger.js';
import { startDaemon, type RunningDaemon } from '../../src/daemon/main.js';
import { WsConsumer } from './aep-stream-client.js';
import { ROOT } from './paths.js';
import { waitFor } from './processes.js';

export const TOKEN = 'control-rig-token-0123456789';

/** The recorded real-Hermes terminal turn (0.18.2), re-keyed to `session`: templates for each hook. */
const RECORDED = readFileSync(path.join(ROOT, 'fixtures', 'hermes-recorded', 'raw', 'oneshot-terminal.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Record<string, unknown>);
const template = (hook: string) => {
  const t = RECORDED.find((e) => e['hook_event_name'] === hook);
  if (!t) throw new Error(`no recorded ${hook}`);
  return t;
};

/** One Hermes hook envelope of `hook` for `session`, with its tool call id and tool name when it has them. */
export function hook(hookName: string, session: string, o: { call?: string; tool?: string; turn?: string } = {}): string {
  const t = structuredClone(template(hookName === 'on_session_finalize' ? 'on_session_end' : hookName));
  t['hook_event_name'] = hookName;
  t['session_id'] = session;
  const extra = (t['extra'] ?? {}) as Record<string, unknown>;
  if (o.call !== undefined) extra['tool_call_id'] = o.call;
  if (o.turn !== undefined) extra['turn_id'] = o.turn;
  else if (typeof extra['turn_id'] === 'string') extra['turn_id'] = `${session}:task:turn1`;
  if (o.tool !== undefined) t['tool_name'] = o.tool;
  t['extra'] = extra;
  return JSON.stringify(t);
}

export interface HookResult {
  readonly status: number;
  readonly body: string;
}

/** POST one hook over the daemon's socket, as a transport would (headers: the gate's declarations). */
export function postHook(socketPath: string, body: string, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<HookResult> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        path: '/hook',
        method: 'POST',
        headers: { host: 'localhost', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
        agent: false,
        ...(signal ? { signal } : {}),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const HOLD = { 'x-hermes-aep-hold-ms': '58000' };
export const STEER = { 'x-hermes-aep-steer': '1' };

export interface Rig {
  readonly d: RunningDaemon;
  readonly env: Record<string, string>;
  readonly wsUrl: string;
  /** the session's history lines, parsed */
  history(session: string): Record<string, any>[];
  historyLines(session: string): string[];
  close(): Promise<void>;
}

/** A real daemon in process: socket for hooks, TCP with AEP_TOKEN for the WebSocket, gates per `env`. */
export async function startRig(env: Record<string, string>, dirs?: Record<string, string>): Promise<Rig> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'aep-control-'));
  const base = dirs ?? {
    AEP_STATE_DIR: path.join(root, 'state'),
    AEP_LOG_DIR: path.join(root, 'logs'),
    AEP_SOCKET: path.join(root, 'h.sock'),
  };
  // AEP_TOKEN '' in `env`: no token at all (reading over TCP then needs the hook token, or AEP_STREAM_READ=open)
  const all: Record<string, string> = { ...base, AEP_PORT: '0', AEP_TOKEN: TOKEN, AEP_FSYNC_INTERVAL_MS: '0', AEP_SOURCE_HOST: 'control-host', ...env };
  if (all['AEP_TOKEN'] === '') delete all['AEP_TOKEN'];
  const d = await startDaemon(readSettings(all), silentLogger);
  await waitFor('hooks served', async () => (await health(all['AEP_SOCKET']!)).spool?.draining === false || undefined);
  const historyLines = (session: string) => {
    try {
      return readFileSync(path.join(all['AEP_LOG_DIR']!, 'hermes', `${session}.jsonl`), 'utf8')
        .split('\n')
        .filter(Boolean);
    } catch {
      return [];
    }
  };
  return {
    d,
    env: all,
    wsUrl: `${d.url!.replace(/^http/, 'ws')}/socket`,
    historyLines,
    history: (s) => historyLines(s).map((l) => JSON.parse(l) as Record<string, any>),
    close: () => d.close(),
  };
}

export async function health(socketPath: string): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: '/healthz', headers: { host: 'localhost' }, agent: false }, (res) => {
      let t = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (t += c));
      res.on('end', () => resolve(JSON.parse(t) as Record<string, any>));
    });
    req.on('error', reject);
    req.end();
  });
}

/** An authenticated consumer subscribed to everything live (its `subscribed` seen). */
export async function operator(rig: Rig, agent = 'test-operator'): Promise<WsConsumer> {
  const c = await WsConsumer.open(rig.wsUrl, TOKEN, 'consumer', agent);
  await waitFor('hello', () => c.parsed().some((f) => f['type'] === 'hello') || undefined);
  c.send({ type: 'subscribe', id: 'all' });
  await waitFor('subscribed', () => c.parsed().some((f) => f['type'] === 'subscribed') || undefined);
  return c;
}

/** A command event from `agent` (seq-less, AEP-0004 §2). */
export function commandOf(
  type: string,
  session: string,
  data: Record<string, unknown>,
  o: { subject?: string; id?: string; agent?: string; capture?: string } = {},
): Record<string, unknown> {
  const agent = o.agent ?? 'test-operator';
  return {
    aep: '0.1',
    id: o.id ?? ulid(),
    type,
    time: new Date().toISOString(),
    source: `aep://operator-host/agent/${agent}/session/${encodeURIComponent(session)}`,
    agent,
    session,
    ...(o.subject !== undefined ? { subject: o.subject, cause: o.subject } : {}),
    severity: 'notice',
    capture: o.capture ?? 'full',
    data,
  };
}

/** Event frames received, parsed */
export const events = (c: WsConsumer) => c.eventLines().map((l) => JSON.parse(l) as Record<string, any>);

/** the ack (control.accepted/rejected) caused by `commandId` as the consumer received it (raw lines) */
export const acksOf = (c: WsConsumer, commandId: string) =>
  c.eventLines().filter((l) => {
    const e = JSON.parse(l) as Record<string, unknown>;
    return (e['type'] === 'control.accepted' || e['type'] === 'control.rejected') && e['cause'] === commandId;
  });
