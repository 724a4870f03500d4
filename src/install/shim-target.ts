import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { absolutePath, ConfigError, int, pathOrOff, readEnv } from '../config/read-env.js';

/**
 * Where the registered shim sends hooks, decided at install time and written
 * into the command itself (`--state-dir`, `--socket`, `--url`), so Hermes
 * needs no AEP_* variables in its own environment. Only what differs from the
 * shim's defaults is recorded: the default command stays
 * `<node> <stateDir>/shim/<version>/hook.cjs`.
 *
 * Precedence: --url / --socket (at most one), then AEP_HOOK_URL, AEP_SOCKET
 * (a path), AEP_PORT (with AEP_HOST): TCP, then the default socket
 * `{stateDir}/hook.sock`. The state dir: --state-dir, AEP_STATE_DIR, default.
 */

export interface TargetOptions {
  readonly socket?: string | undefined;
  readonly url?: string | undefined;
  readonly stateDir?: string | undefined;
}

export interface ShimTarget {
  readonly stateDir: string;
  /** the shim's argv after the script: what install records in the command */
  readonly args: string[];
  /** one line for the install report */
  readonly summary: string;
}

export class TargetError extends Error {
  override readonly name = 'TargetError';
}

export function defaultStateDir(): string {
  return path.join(os.homedir(), '.aep', 'state', 'hermes-aep');
}

function absolute(p: string): string {
  const expanded = p === '~' ? os.homedir() : p.startsWith('~/') ? path.join(os.homedir(), p.slice(2)) : p;
  return path.resolve(expanded);
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** A plain-http loopback URL ending in /hook (a bare `http://host:port` gets `/hook`). */
function hookUrl(raw: string, from: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new TargetError(`${from} is not a URL`);
  }
  if (u.protocol !== 'http:') throw new TargetError(`${from} must be an http:// URL (the shim speaks plain HTTP to this machine only)`);
  if (!LOOPBACK.test(u.hostname))
    throw new TargetError(`${from} must point at this machine (127.0.0.1, [::1] or localhost): the shim sends hook content and the token in clear`);
  if (u.pathname === '/') u.pathname = '/hook';
  return u.href;
}

/** The variables install reads, by the daemon's own rules (a path the daemon would refuse is refused here too). */
const installSettings = z.looseObject({
  AEP_STATE_DIR: absolutePath.optional(),
  AEP_SOCKET: pathOrOff.optional(),
  AEP_PORT: int(1, 65535).optional(),
  AEP_HOST: z.string().optional(),
  AEP_HOOK_URL: z.string().optional(),
});

function readInstallEnv(env: NodeJS.ProcessEnv): z.output<typeof installSettings> {
  try {
    return readEnv(installSettings, env);
  } catch (err) {
    if (err instanceof ConfigError) throw new TargetError(`${err.message} (install records where the shim sends hooks from them)`);
    throw err;
  }
}

export function resolveTarget(opts: TargetOptions, env: NodeJS.ProcessEnv = process.env): ShimTarget {
  const e = readInstallEnv(env);
  const stateDir = absolute(opts.stateDir ?? e.AEP_STATE_DIR ?? defaultStateDir());
  const args = stateDir === defaultStateDir() ? [] : ['--state-dir', stateDir];
  if (opts.socket !== undefined && opts.url !== undefined) throw new TargetError('give --socket or --url, not both');
  const defaultSocket = path.join(stateDir, 'hook.sock');
  const socket = (p: string, from: string): ShimTarget => {
    const abs = absolute(p);
    return { stateDir, args: abs === defaultSocket ? args : [...args, '--socket', abs], summary: `unix socket ${abs}${from}` };
  };
  const url = (u: string, from: string): ShimTarget => {
    const href = hookUrl(u, from);
    return { stateDir, args: [...args, '--url', href], summary: `${href} (TCP, bearer token from ${path.join(stateDir, 'hook-token')})` };
  };
  if (opts.url !== undefined) return url(opts.url, '--url');
  if (opts.socket !== undefined) return socket(opts.socket, '');
  if (e.AEP_HOOK_URL) return url(e.AEP_HOOK_URL, 'AEP_HOOK_URL');
  const envSocket = e.AEP_SOCKET;
  if (envSocket && envSocket !== 'off') return socket(envSocket, ' (AEP_SOCKET)');
  const n = e.AEP_PORT;
  if (n !== undefined) {
    const host = e.AEP_HOST ?? '127.0.0.1';
    const h = host === '0.0.0.0' ? '127.0.0.1' : host === '::' || host === '::1' ? '[::1]' : host;
    return url(`http://${h}:${n}/hook`, 'AEP_HOST/AEP_PORT');
  }
  if (envSocket === 'off') throw new TargetError('AEP_SOCKET=off leaves the shim no target: give --url (or set AEP_PORT or AEP_HOOK_URL)');
  return socket(defaultSocket, ' (the default)');
}
