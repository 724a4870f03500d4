import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import path from 'node:path';
import { ROOT } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';
import { requirePython } from '../../support/python.js';

/** The forwarder plugin, copied as install copies it, with the shim arguments install would record. */
export function pluginCopy(args: readonly string[] = []): string {
  const dir = path.join(tempDir('hermes-aep-plugin-'), 'hermes-aep');
  mkdirSync(dir, { recursive: true });
  for (const f of ['__init__.py', 'plugin.yaml']) copyFileSync(path.join(ROOT, 'plugin', 'hermes-aep', f), path.join(dir, f));
  writeFileSync(path.join(dir, 'hermes-aep.json'), JSON.stringify({ installed_by: 'hermes-aep', version: '0.0.0', args }));
  return dir;
}

export type Kwargs = Record<string, unknown>;
export interface Call {
  /** a Python statement the harness runs just before this call */
  readonly exec?: string;
  readonly hook: string;
  readonly kwargs: Kwargs;
  /** wait until the worker delivered everything queued so far */
  readonly drain?: boolean;
  /** run on a thread of its own (a parallel tool call, another session); the next call starts once its hook is queued */
  readonly background?: boolean;
}
export interface HarnessSpec {
  readonly pluginDir: string;
  readonly calls: readonly Call[];
  readonly env?: Record<string, string>;
  readonly cwd?: string;
  readonly queueMax?: number;
  /** hold the delivery lock while the calls fire (the worker stalls; the queue fills) */
  readonly holdLock?: boolean;
  /** exit as Hermes 0.19.0's `hermes -z` does: logging.shutdown(), then os._exit(0) (atexit never runs) */
  readonly hardExit?: boolean;
  /** a Python statement run before register() (`sys` and `types` in scope) */
  readonly before?: string;
}
export interface HarnessResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number;
  readonly out: {
    results: { ret: unknown; ms: number; raised: string | null }[];
    hooks: string[];
    dropped: number;
    worker_alive: boolean;
  };
}

/** Run test/integration/plugin/harness.py (python3, the plugin imported as Hermes imports it) to its exit (atexit included, unless hardExit). */
export function runHarness(spec: HarnessSpec): Promise<HarnessResult> {
  requirePython();
  const out = path.join(tempDir('hermes-aep-harness-'), 'out.json');
  const input = JSON.stringify({
    plugin_dir: spec.pluginDir,
    calls: spec.calls,
    env: spec.env ?? {},
    cwd: spec.cwd,
    queue_max: spec.queueMax,
    hold_lock: spec.holdLock,
    hard_exit: spec.hardExit,
    before: spec.before,
    out,
  });
  return new Promise((resolve, reject) => {
    const child = execFile(
      'python3',
      [path.join(ROOT, 'test', 'integration', 'plugin', 'harness.py')],
      { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...spec.env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? -1) : 0;
        try {
          resolve({ stdout, stderr, code: typeof code === 'number' ? code : -1, out: JSON.parse(readFileSync(out, 'utf8')) as HarnessResult['out'] });
        } catch {
          reject(new Error(`harness failed (${String(code)}): ${stderr}`));
        }
      },
    );
    child.stdin!.end(input);
  });
}

/** A stand-in daemon on a Unix socket: records each POST body in arrival order, answers with `reply`. */
export interface FakeDaemon {
  readonly socket: string;
  readonly stateDir: string;
  readonly bodies: Buffer[];
  readonly headers: IncomingMessage['headers'][];
  close(): Promise<void>;
}

export async function fakeDaemon(reply: (body: Buffer, res: ServerResponse) => void = (_b, res) => res.end('{}')): Promise<FakeDaemon> {
  const stateDir = tempDir('hermes-aep-fake-state-');
  const socket = path.join(stateDir, 'hook.sock');
  const bodies: Buffer[] = [];
  const headers: IncomingMessage['headers'][] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      bodies.push(body);
      headers.push(req.headers);
      reply(body, res);
    });
  });
  await new Promise<void>((r) => server.listen(socket, r));
  return {
    socket,
    stateDir,
    bodies,
    headers,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * The kwargs Hermes passed for a recorded envelope: `extra` holds every kwarg but tool_name/args/session_id/
 * parent_session_id, in Hermes's order; the subagent pair has no session_id, only the parent's.
 */
export function kwargsOf(env: { hook_event_name: string; tool_name: unknown; tool_input: unknown; session_id: string; extra: Kwargs }): Kwargs {
  const k: Kwargs = {};
  if (env.tool_name !== null) k.tool_name = env.tool_name;
  if (env.tool_input !== null) k.args = env.tool_input;
  if (env.session_id !== '') k[env.hook_event_name.startsWith('subagent_') ? 'parent_session_id' : 'session_id'] = env.session_id;
  return { ...k, ...env.extra };
}
