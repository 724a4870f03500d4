/**
 * The scripted envelopes through the shim the build ships, as Hermes runs a
 * shell hook: `node <dist>/src/shim/hook.cjs`, the envelope on stdin, one JSON
 * object read back from stdout, one hook at a time in firing order. The shim
 * is pointed at the daemon the demo found (its socket, or its TCP /hook with
 * the hook token), and its spool at a directory of the demo's own: a hook the
 * daemon did not take must not be replayed into the user's history later.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DemoEnvelope } from './script.js';

/** Where the shim sends: what `install` would write into the registered command. */
export type HookTarget = { readonly socket: string } | { readonly url: string; readonly tokenFile: string };

/** The shim `install` copies and registers (dist/src/shim/hook.cjs, beside this file's folder). */
export const SHIPPED_SHIM = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'shim', 'hook.cjs');

export interface SendReport {
  /** hooks whose shim exited 0 with one JSON object on stdout */
  readonly answered: number;
  /** hooks the shim put in the demo's spool (the daemon was unreachable or answered 5xx) */
  readonly spooled: number;
  readonly ms: number;
}

function shimEnv(target: HookTarget, spoolStateDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AEP_STATE_DIR: spoolStateDir };
  // the target alone decides: no variable of the caller's may send the demo elsewhere
  for (const k of ['AEP_SOCKET', 'AEP_HOOK_URL', 'AEP_TOKEN_FILE', 'AEP_HOST', 'AEP_PORT', 'AEP_HERMES_CONTROL', 'AEP_INSTRUCT']) delete env[k];
  if ('socket' in target) env['AEP_SOCKET'] = target.socket;
  else Object.assign(env, { AEP_SOCKET: 'off', AEP_HOOK_URL: target.url, AEP_TOKEN_FILE: target.tokenFile });
  return env;
}

function runOne(envelope: DemoEnvelope, env: NodeJS.ProcessEnv, shim: string): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [shim], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.on('error', () => resolve(false));
    child.on('close', (code) => {
      try {
        const reply: unknown = JSON.parse(out);
        resolve(code === 0 && typeof reply === 'object' && reply !== null);
      } catch {
        resolve(false);
      }
    });
    child.stdin.on('error', () => undefined);
    // Hermes writes `json.dumps(payload)` and closes stdin
    child.stdin.end(JSON.stringify(envelope));
  });
}

function spooledHooks(spoolStateDir: string): number {
  try {
    return readdirSync(path.join(spoolStateDir, 'spool')).filter((f) => f.endsWith('.hook')).length;
  } catch {
    return 0;
  }
}

export async function sendHooks(envelopes: readonly DemoEnvelope[], target: HookTarget, spoolStateDir: string, shim = SHIPPED_SHIM): Promise<SendReport> {
  const env = shimEnv(target, spoolStateDir);
  const t0 = performance.now();
  let answered = 0;
  for (const e of envelopes) if (await runOne(e, env, shim)) answered += 1;
  return { answered, spooled: spooledHooks(spoolStateDir), ms: performance.now() - t0 };
}
