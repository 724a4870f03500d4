import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { CAPTURE_LEVELS, type CaptureLevel } from '../core/capture-levels.js';
import type { CapturePolicy } from '../capture/policy.js';
import { MAX_SOCKET_PATH_BYTES } from '../transport/unix-socket.js';
import { absolutePath, bool, httpUrl, int, listOf, oneOf, pathOrOff, readEnv, reject, setting, wsUrl } from './read-env.js';

/**
 * Nodes (JSON values plus object keys) a hook body may hold. A real
 * `pre_llm_call` is long strings in a modest number of messages (about 20
 * nodes each: 100,000 is some 5,000 messages); the costliest shape at the cap
 * (50,000 keys in a digested field) takes about 75 ms of the daemon's CPU.
 * A body built to make parsing and every walk after it slow is refused by
 * the scan before anything is parsed.
 */
export const DEFAULT_MAX_BODY_NODES = 100_000;

const level = oneOf(CAPTURE_LEVELS);
/**
 * The longest hold: Hermes clamps a hook's `timeout:` to 300 s and the shim
 * waits the hold plus 3 s, so a longer one would be killed before it answers.
 */
export const MAX_HOLD_MS = 285_000;
/** A tool-name pattern, anchored like Hermes's own `matcher:` (a whole-name match). */
const toolPattern = (raw: string): RegExp | undefined => {
  try {
    return new RegExp(`^(?:${raw})$`, 'u');
  } catch {
    return undefined;
  }
};
const HOUR_MS = 3_600_000;
/**
 * A session Hermes has not spoken in for an hour is over: `hermes -z` and a killed Hermes never finalize, and the
 * span mirror already closes a session's open spans after the same hour of silence (AEP_OTEL_IDLE_MS), so the
 * history and the trace agree on when a silent session ended. Longer than any wait Hermes itself has inside a
 * turn (a clarify or approval prompt, a hook timeout: minutes), short enough that `sessions_active` means
 * "sessions in use" within the hour.
 */
export const DEFAULT_SESSION_IDLE_S = 3_600;
const HOST_NAME = /^[A-Za-z0-9._-]{1,253}$/;
/** an IP address (a v6 one with or without brackets) or a host name, never a port or a URL */
const isHost = (s: string) => isIP(s.replace(/^\[(.*)\]$/, '$1')) !== 0 || HOST_NAME.test(s);
/** an http(s) origin as a browser sends it: scheme, host, optional port, nothing else */
const isOrigin = (s: string) => {
  try {
    const u = new URL(s);
    return ['http:', 'https:'].includes(u.protocol) && u.origin === s.replace(/\/$/, '');
  } catch {
    return false;
  }
};

/** Jaeger's UI on this machine (the compose file publishes it there): the base of the live view's trace links. */
export const DEFAULT_JAEGER_URL = 'http://127.0.0.1:16686';

/** `{AEP_STATE_DIR}/webhook-secret`: the HMAC secret Hermes's outbound webhooks are signed with (install writes it into Hermes's config). */
export const WEBHOOK_SECRET_FILE = 'webhook-secret';
/** `{AEP_STATE_DIR}/webhook-deliveries`: the delivery ids accepted within the window (transport/webhook/delivery-ledger.ts). */
export const WEBHOOK_LEDGER_FILE = 'webhook-deliveries';

/** Every setting the daemon reads, with its default. The README's settings table mirrors this. */
const daemonSettings = z
  .looseObject({
    AEP_HOST: setting('an IP address or a host name to listen on', (raw) => (isIP(raw) !== 0 || HOST_NAME.test(raw) ? raw : undefined)).default('127.0.0.1'),
    // TCP only when set (compose); the Unix socket is the default transport
    AEP_PORT: int(0, 65535).optional(),
    AEP_SOCKET: pathOrOff.optional(),
    AEP_TOKEN_FILE: absolutePath.optional(),
    AEP_ALLOWED_HOSTS: listOf('host names or IP addresses (no ports, no URLs)', isHost).default([]),
    AEP_MAX_BODY_NODES: int(1000, 100_000_000).default(DEFAULT_MAX_BODY_NODES),
    AEP_LOG_DIR: absolutePath.optional(),
    AEP_STATE_DIR: absolutePath.optional(),
    AEP_CAPTURE: level.default('metadata'),
    AEP_CAPTURE_ATTENTION: level.optional(),
    AEP_REDACT_PII: bool.default(true),
    AEP_SECRET_NAMES: listOf('environment variable names', (n) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(n)).default([]),
    AEP_SOURCE_HOST: setting('letters, digits, dots and dashes (at most 253)', (raw) => (/^[A-Za-z0-9.-]{1,253}$/.test(raw) ? raw : undefined)).optional(),
    AEP_MAX_BODY_BYTES: int(1024, 1024 * 1024 * 1024).default(64 * 1024 * 1024),
    AEP_LOG_QUEUE_MAX: int(1).default(10_000),
    AEP_FSYNC_INTERVAL_MS: int(0, HOUR_MS).default(1_000),
    AEP_MAX_SESSIONS: int(1).default(10_000),
    AEP_DEBUG: bool.default(false),
    // a start refused (a directory of another user, an unreadable token): exit 2, or stay up answering 503 with why (containers)
    AEP_START_REFUSED: oneOf(['exit', 'serve'] as const).default('exit'),
    AEP_RECORD_DIR: absolutePath.optional(),
    AEP_REPLAY_WINDOW_MS: int(0, 30 * 24 * HOUR_MS).default(HOUR_MS),
    // Hermes's outbound webhooks: a delivery whose timestamp is further than this from the daemon's clock is refused
    AEP_WEBHOOK_WINDOW_S: int(10, 86_400).default(300),
    AEP_SNAPSHOT_INTERVAL_MS: int(0, 24 * HOUR_MS).default(30_000),
    // a session silent this long is ended by the daemon (`session.ended {reason: timeout}`, `hermesendedby: idle`); 0: never
    AEP_SESSION_IDLE_S: int(0, 30 * 86_400).default(DEFAULT_SESSION_IDLE_S),
    // --- the AEP stream (AEP-0003): embedded endpoint, ingest, relay link ---
    AEP_TOKEN: setting('16 to 512 printable characters without spaces', (raw) => (/^[\x21-\x7e]{16,512}$/.test(raw) ? raw : undefined)).optional(),
    AEP_STREAM_READ: oneOf(['token', 'open'] as const).default('token'),
    AEP_ALLOWED_ORIGINS: listOf('origins (scheme://host[:port], no path)', isOrigin).default([]),
    AEP_STREAM_BUFFER: int(1, 1_000_000).default(1_000),
    AEP_STREAM_SESSIONS: int(1, 1_000_000).default(1_000),
    AEP_STREAM_MAX_BYTES: int(1024 * 1024, 64 * 1024 * 1024 * 1024).default(32 * 1024 * 1024),
    AEP_STREAM_CLIENT_BYTES: int(64 * 1024, 1024 * 1024 * 1024).default(8 * 1024 * 1024),
    AEP_STREAM_SUBSCRIPTIONS: int(1, 100_000).default(256),
    AEP_STREAM_HEARTBEAT_MS: int(100, HOUR_MS).default(15_000),
    AEP_INGEST_MAX_EVENTS: int(1, 1_000_000).default(10_000),
    AEP_RELAY_URL: wsUrl.optional(),
    AEP_RELAY_OUTBOX: int(1, 10_000_000).default(10_000),
    // --- the opt-in control gates (src/control/): off, the daemon is observe-only ---
    AEP_HERMES_CONTROL: bool.default(false),
    AEP_HERMES_GATE_TOOLS: setting('a regular expression (matched against the whole tool name)', toolPattern).optional(),
    AEP_ATTENTION_TIMEOUT_MS: int(1_000, MAX_HOLD_MS).default(55_000),
    AEP_INSTRUCT: bool.default(false),
    // --- the live view (src/ui-server/): the page at /ui, its state and its answers ---
    AEP_UI: oneOf(['on', 'off'] as const).default('on'),
    AEP_UI_JAEGER_URL: httpUrl.default(DEFAULT_JAEGER_URL),
    // --- model-call cost (src/usage/): prices that win over the bundled database, read by readSettings ---
    AEP_PRICES_FILE: absolutePath.optional(),
  })
  .transform((e, ctx) => {
    const home = os.homedir();
    const aepHome = path.join(home, '.aep');
    // The attention override defaults to `redacted` so prompts stay readable,
    // except when the operator asked for nothing at all.
    const attention: CaptureLevel = e.AEP_CAPTURE_ATTENTION ?? (e.AEP_CAPTURE === 'none' ? 'none' : 'redacted');
    const secretValues = e.AEP_SECRET_NAMES.map((n) => e[n]).filter((v): v is string => typeof v === 'string' && v.length >= 4);
    const stateDir = e.AEP_STATE_DIR ?? path.join(aepHome, 'state', 'hermes-aep');
    const socket = e.AEP_SOCKET === 'off' ? undefined : (e.AEP_SOCKET ?? path.join(stateDir, 'hook.sock'));
    if (socket !== undefined && Buffer.byteLength(socket) > MAX_SOCKET_PATH_BYTES) {
      return reject(ctx, 'AEP_SOCKET', `a path of at most ${MAX_SOCKET_PATH_BYTES} bytes (default {AEP_STATE_DIR}/hook.sock)`);
    }
    if (socket === undefined && e.AEP_PORT === undefined) {
      return reject(ctx, 'AEP_SOCKET', 'off only together with AEP_PORT (AEP_SOCKET=off needs AEP_PORT: the daemon must listen somewhere)');
    }
    const policy: CapturePolicy = {
      ceiling: e.AEP_CAPTURE,
      categories: { attention },
      redact: { home, pii: e.AEP_REDACT_PII, secretNames: e.AEP_SECRET_NAMES, secretValues },
      agent: 'hermes',
    };
    return {
      host: e.AEP_HOST,
      /** TCP port; absent = no TCP listener */
      ...(e.AEP_PORT !== undefined ? { port: e.AEP_PORT } : {}),
      /** the Unix socket (default `{stateDir}/hook.sock`); absent = `AEP_SOCKET=off` */
      ...(socket !== undefined ? { socket } : {}),
      /** the hook token every TCP `POST /hook` must carry */
      tokenFile: e.AEP_TOKEN_FILE ?? path.join(stateDir, 'hook-token'),
      /** Host names accepted besides localhost, 127.0.0.1, [::1] and the bound address */
      allowedHosts: e.AEP_ALLOWED_HOSTS,
      maxBodyNodes: e.AEP_MAX_BODY_NODES,
      historyDir: e.AEP_LOG_DIR ?? path.join(aepHome, 'logs'),
      stateDir,
      policy,
      sourceHost: e.AEP_SOURCE_HOST ?? sanitizeHost(os.hostname()),
      maxBodyBytes: e.AEP_MAX_BODY_BYTES,
      historyQueueMax: e.AEP_LOG_QUEUE_MAX,
      /** fdatasync of the session logs every this many ms; 0 = before each hook is answered */
      fsyncIntervalMs: e.AEP_FSYNC_INTERVAL_MS,
      maxSessions: e.AEP_MAX_SESSIONS,
      debug: e.AEP_DEBUG,
      /** AEP_START_REFUSED=serve: a refused start keeps the TCP port, answering 503 `start-refused` with why (/healthz included) */
      serveRefusal: e.AEP_START_REFUSED === 'serve',
      replayWindowMs: e.AEP_REPLAY_WINDOW_MS,
      /** `POST /webhook` (with TCP on): its secret file and its timestamp window */
      webhook: { secretFile: path.join(stateDir, WEBHOOK_SECRET_FILE), windowMs: e.AEP_WEBHOOK_WINDOW_S * 1000 },
      /** how often the start-up snapshot is written (also at shutdown); 0: only at shutdown */
      snapshotIntervalMs: e.AEP_SNAPSHOT_INTERVAL_MS,
      /** AEP_SESSION_IDLE_S in ms: a session Hermes has not spoken in for this long is ended by the daemon; 0: never */
      sessionIdleMs: e.AEP_SESSION_IDLE_S * 1000,
      stream: {
        /** AEP_TOKEN: authenticates stream clients (ingest, control) and this daemon to its relay; absent = watch-only over TCP, for holders of the hook token (or anyone with AEP_STREAM_READ=open) */
        ...(e.AEP_TOKEN !== undefined ? { token: e.AEP_TOKEN } : {}),
        /** AEP_STREAM_READ=open: without AEP_TOKEN, anyone on the host may read the stream over TCP (default: only the hook token's holders) */
        openRead: e.AEP_STREAM_READ === 'open',
        /** origins (a web dashboard) allowed to READ the stream; every other Origin is refused */
        allowedOrigins: e.AEP_ALLOWED_ORIGINS.map((o) => new URL(o).origin),
        /** replay buffer depth: events held per session */
        buffer: e.AEP_STREAM_BUFFER,
        /** sessions held in the replay buffer (least recently active evicted whole) */
        sessions: e.AEP_STREAM_SESSIONS,
        /** bytes of event lines the replay buffer holds at most */
        maxBytes: e.AEP_STREAM_MAX_BYTES,
        /** bytes a consumer may leave unsent: past half, its debug/info events are dropped (counted); past all, it is disconnected */
        clientBytes: e.AEP_STREAM_CLIENT_BYTES,
        /** concurrent subscriptions across all consumers */
        subscriptions: e.AEP_STREAM_SUBSCRIPTIONS,
        /** SSE comment / WS ping interval */
        heartbeatMs: e.AEP_STREAM_HEARTBEAT_MS,
        /** events one POST /events may carry */
        ingestMaxEvents: e.AEP_INGEST_MAX_EVENTS,
      },
      /** the relay this daemon connects out to as an emitter (AEP_RELAY_URL) */
      ...(e.AEP_RELAY_URL !== undefined ? { relay: { url: e.AEP_RELAY_URL, outbox: e.AEP_RELAY_OUTBOX } } : {}),
      control: {
        /** AEP_HERMES_CONTROL: a matching pre_tool_call is held as an answerable permission card */
        gate: e.AEP_HERMES_CONTROL,
        /** AEP_HERMES_GATE_TOOLS: which tool names the gate holds (every tool when unset) */
        gateTools: e.AEP_HERMES_GATE_TOOLS ?? /^[\s\S]*$/,
        /** the hold window: a card unanswered this long expires and the call proceeds */
        holdMs: e.AEP_ATTENTION_TIMEOUT_MS,
        /** AEP_INSTRUCT: x.hermes.control.instruct is accepted, delivered at the next turn start */
        instruct: e.AEP_INSTRUCT,
      },
      ui: {
        /** AEP_UI: the live view (`/ui`, `/ui/state`, `/ui/command`) is served; off: they answer 404 */
        on: e.AEP_UI === 'on',
        /** AEP_UI_JAEGER_URL: the base of the page's "open in Jaeger" links (`<base>/trace/<traceId>`), no trailing slash */
        jaegerUrl: e.AEP_UI_JAEGER_URL.replace(/\/+$/, ''),
      },
      /** AEP_PRICES_FILE: the user's price file (read and checked with the settings, src/usage/price-file.ts) */
      ...(e.AEP_PRICES_FILE !== undefined ? { pricesFile: e.AEP_PRICES_FILE } : {}),
      /** opt-in: where raw envelopes are recorded (content-bearing) */
      ...(e.AEP_RECORD_DIR !== undefined ? { recordDir: e.AEP_RECORD_DIR } : {}),
    };
  });

export type DaemonConfig = Readonly<z.output<typeof daemonSettings>>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): DaemonConfig {
  return readEnv(daemonSettings, env);
}

function sanitizeHost(h: string): string {
  const s = h
    .toLowerCase()
    .replace(/[^a-z0-9.-]/g, '-')
    .slice(0, 253);
  return s.length > 0 ? s : 'localhost';
}
