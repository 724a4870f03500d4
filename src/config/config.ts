import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { CAPTURE_LEVELS, type CaptureLevel } from '../capture/levels.js';
import type { CapturePolicy } from '../capture/policy.js';
import { MAX_SOCKET_PATH_BYTES } from '../transport/unix-socket.js';

const level = z.enum(CAPTURE_LEVELS);
const bool = z.enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off']).transform((v) => ['1', 'true', 'yes', 'on'].includes(v));
const port = z.coerce.number().int().min(0).max(65535);
const list = z.string().transform((s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean),
);

/**
 * Nodes (JSON values plus object keys) a hook body may hold. A real
 * `pre_llm_call` is long strings in a modest number of messages (about 20
 * nodes each: 100,000 is some 5,000 messages); the costliest shape at the cap
 * (50,000 keys in a digested field) takes about 75 ms of the daemon's CPU.
 * A body built to make parsing and every walk after it slow is refused by
 * the scan before anything is parsed.
 */
export const DEFAULT_MAX_BODY_NODES = 100_000;

/** Every setting the daemon reads, with its default. The README's settings table mirrors this. */
/** Empty values read as unset, so `AEP_PORT=` means the default, never 0. */
const unsetIfEmpty = (env: NodeJS.ProcessEnv): Record<string, string> =>
  Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''));

const envSchema = z.object({
  AEP_HOST: z.string().min(1).default('127.0.0.1'),
  // TCP only when set (compose); the Unix socket is the default transport
  AEP_PORT: port.optional(),
  AEP_SOCKET: z.string().min(1).optional(),
  AEP_TOKEN_FILE: z.string().min(1).optional(),
  AEP_ALLOWED_HOSTS: list.default([]),
  AEP_MAX_BODY_NODES: z.coerce.number().int().min(1000).max(100_000_000).default(DEFAULT_MAX_BODY_NODES),
  AEP_LOG_DIR: z.string().min(1).optional(),
  AEP_STATE_DIR: z.string().min(1).optional(),
  AEP_CAPTURE: level.default('metadata'),
  AEP_CAPTURE_ATTENTION: level.optional(),
  AEP_REDACT_PII: bool.default(true),
  AEP_SECRET_NAMES: list.default([]),
  AEP_SOURCE_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.-]{1,253}$/, 'letters, digits, dots and dashes')
    .optional(),
  AEP_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024 * 1024)
    .default(64 * 1024 * 1024),
  AEP_LOG_QUEUE_MAX: z.coerce.number().int().min(1).default(10_000),
  AEP_FSYNC_INTERVAL_MS: z.coerce.number().int().min(0).max(3_600_000).default(1_000),
  AEP_MAX_SESSIONS: z.coerce.number().int().min(1).default(10_000),
  AEP_DEBUG: bool.default(false),
  AEP_RECORD_DIR: z.string().min(1).optional(),
  AEP_REPLAY_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(30 * 24 * 3_600_000)
    .default(3_600_000),
  AEP_SNAPSHOT_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(24 * 3_600_000)
    .default(30_000),
});

export interface DaemonConfig {
  readonly host: string;
  /** TCP port; absent = no TCP listener */
  readonly port?: number;
  /** the Unix socket (default `{stateDir}/hook.sock`); absent = `AEP_SOCKET=off` */
  readonly socket?: string;
  /** the hook token every TCP `POST /hook` must carry */
  readonly tokenFile: string;
  /** AEP_ALLOWED_HOSTS: Host names accepted besides localhost, 127.0.0.1, [::1] and the bound address */
  readonly allowedHosts: readonly string[];
  readonly maxBodyNodes: number;
  readonly logDir: string;
  readonly stateDir: string;
  readonly policy: CapturePolicy;
  readonly sourceHost: string;
  readonly maxBodyBytes: number;
  readonly logQueueMax: number;
  /** fdatasync of the session logs every this many ms; 0 = before each hook is answered */
  readonly fsyncIntervalMs: number;
  readonly maxSessions: number;
  readonly debug: boolean;
  readonly replayWindowMs: number;
  /** how often the start-up snapshot is written (also at shutdown); 0: only at shutdown */
  readonly snapshotIntervalMs: number;
  /** opt-in: where raw envelopes are recorded (content-bearing) */
  readonly recordDir?: string;
}

/** A configuration error names the variable and the rule, never echoes the value. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): DaemonConfig {
  const parsed = envSchema.safeParse(unsetIfEmpty(env));
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${why}`);
  }
  const e = parsed.data;
  const home = os.homedir();
  const aepHome = path.join(home, '.aep');
  // The attention override defaults to `redacted` so prompts stay readable,
  // except when the operator asked for nothing at all.
  const attention: CaptureLevel = e.AEP_CAPTURE_ATTENTION ?? (e.AEP_CAPTURE === 'none' ? 'none' : 'redacted');
  const secretValues = e.AEP_SECRET_NAMES.map((n) => env[n]).filter((v): v is string => typeof v === 'string' && v.length >= 4);
  const stateDir = path.resolve(e.AEP_STATE_DIR ?? path.join(aepHome, 'state', 'hermes-aep'));
  const socket = e.AEP_SOCKET === 'off' ? undefined : path.resolve(e.AEP_SOCKET ?? path.join(stateDir, 'hook.sock'));
  if (socket !== undefined && Buffer.byteLength(socket) > MAX_SOCKET_PATH_BYTES) {
    throw new ConfigError(`invalid configuration: AEP_SOCKET (default {AEP_STATE_DIR}/hook.sock): a socket path must fit in ${MAX_SOCKET_PATH_BYTES} bytes`);
  }
  if (socket === undefined && e.AEP_PORT === undefined) {
    throw new ConfigError('invalid configuration: AEP_SOCKET=off needs AEP_PORT (the daemon must listen somewhere)');
  }
  return {
    host: e.AEP_HOST,
    ...(e.AEP_PORT !== undefined ? { port: e.AEP_PORT } : {}),
    ...(socket !== undefined ? { socket } : {}),
    tokenFile: path.resolve(e.AEP_TOKEN_FILE ?? path.join(stateDir, 'hook-token')),
    allowedHosts: e.AEP_ALLOWED_HOSTS,
    maxBodyNodes: e.AEP_MAX_BODY_NODES,
    logDir: path.resolve(e.AEP_LOG_DIR ?? path.join(aepHome, 'logs')),
    stateDir,
    policy: {
      ceiling: e.AEP_CAPTURE,
      categories: { attention: attention },
      redact: { home, pii: e.AEP_REDACT_PII, secretNames: e.AEP_SECRET_NAMES, secretValues },
      agent: 'hermes',
    },
    sourceHost: e.AEP_SOURCE_HOST ?? sanitizeHost(os.hostname()),
    maxBodyBytes: e.AEP_MAX_BODY_BYTES,
    logQueueMax: e.AEP_LOG_QUEUE_MAX,
    fsyncIntervalMs: e.AEP_FSYNC_INTERVAL_MS,
    maxSessions: e.AEP_MAX_SESSIONS,
    debug: e.AEP_DEBUG,
    replayWindowMs: e.AEP_REPLAY_WINDOW_MS,
    snapshotIntervalMs: e.AEP_SNAPSHOT_INTERVAL_MS,
    ...(e.AEP_RECORD_DIR ? { recordDir: path.resolve(e.AEP_RECORD_DIR) } : {}),
  };
}

function sanitizeHost(h: string): string {
  const s = h
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, '-')
    .slice(0, 253);
  return s.length > 0 ? s : 'localhost';
}
