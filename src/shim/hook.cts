// The hook shim: Hermes runs it once per hook firing. It must start fast and
// can never fail the agent, so it imports only node:http and node:fs (node:os
// only when HOME is unset) and answers `{}` on every failure path. stdout
// carries exactly one JSON object; nothing else. CommonJS on purpose: run directly (`node hook.cjs`, what
// `install` registers) it skips the ESM loader, a measurable part of a Node
// start on every hook firing; `hermes-aep hook` loads the same file.
import { request, type IncomingMessage, type RequestOptions } from 'node:http';
import { readFileSync } from 'node:fs';

const EMPTY = '{}';
const DEFAULT_TIMEOUT_MS = 5_000;
const SOCKET_FILE = 'hook.sock';
const TOKEN_FILE = 'hook-token';

/** Where the envelope goes: the daemon's private Unix socket, or (compose) its TCP /hook URL with the token. */
export type Target = { readonly socket: string } | { readonly url: URL; readonly token: string | undefined };

interface ShimArgs {
  socket?: string;
  url?: string;
  stateDir?: string;
  /** which of --socket / --url came last (it wins when both are given) */
  last?: 'socket' | 'url';
}

/** `--socket PATH`, `--url URL`, `--state-dir DIR` (or `--name=value`); anything else is ignored. */
function parseArgs(argv: readonly string[]): ShimArgs {
  const out: ShimArgs = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(0, eq) : a;
    if (name !== '--socket' && name !== '--url' && name !== '--state-dir') continue;
    const value = eq > 0 ? a.slice(eq + 1) : argv[++i];
    if (!value) continue;
    if (name === '--state-dir') out.stateDir = value;
    else {
      out[name === '--socket' ? 'socket' : 'url'] = value;
      out.last = name === '--socket' ? 'socket' : 'url';
    }
  }
  return out;
}

/** The default state dir, `~/.aep/state/hermes-aep` (HOME first: no node:os on the hot path). */
function defaultStateDir(): string {
  const home = process.env.HOME || (require('node:os') as typeof import('node:os')).homedir();
  return `${home}/.aep/state/hermes-aep`;
}

/** A /hook URL over plain http, with the token read from its file (absent or malformed → sent without). */
function urlTarget(raw: string, tokenFile: string): Target | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:') return undefined;
  let token: string | undefined;
  try {
    const t = readFileSync(tokenFile, 'utf8').trim();
    if (/^[0-9a-f]{64}$/.test(t)) token = t;
  } catch {
    token = undefined;
  }
  return { url, token };
}

/**
 * The daemon's address: argv first (`--socket PATH`, `--url URL`, then the
 * socket under `--state-dir DIR`), then the environment (`AEP_SOCKET`,
 * `AEP_HOOK_URL`, the legacy `AEP_HOST`/`AEP_PORT`, then the socket under
 * `AEP_STATE_DIR`), then the socket under the default state dir. A URL must
 * be plain http; its token comes from `{state dir}/hook-token` (or
 * `AEP_TOKEN_FILE`) and is sent over TCP only.
 */
export function resolveTarget(argv: readonly string[], env: NodeJS.ProcessEnv): Target | undefined {
  const args = parseArgs(argv);
  // empty values read as unset, as the daemon reads them
  const stateDir = args.stateDir || env.AEP_STATE_DIR || defaultStateDir();
  const tokenFile = args.stateDir ? `${args.stateDir}/${TOKEN_FILE}` : env.AEP_TOKEN_FILE || `${stateDir}/${TOKEN_FILE}`;
  if (args.last === 'socket') return { socket: args.socket! };
  if (args.last === 'url') return urlTarget(args.url!, tokenFile);
  if (args.stateDir) return { socket: `${args.stateDir}/${SOCKET_FILE}` };
  if (env.AEP_SOCKET && env.AEP_SOCKET !== 'off') return { socket: env.AEP_SOCKET };
  if (env.AEP_HOOK_URL) return urlTarget(env.AEP_HOOK_URL, tokenFile);
  if (env.AEP_PORT) {
    const host = env.AEP_HOST && env.AEP_HOST !== '0.0.0.0' ? env.AEP_HOST : '127.0.0.1';
    return urlTarget(`http://${host.includes(':') ? `[${host}]` : host}:${env.AEP_PORT}/hook`, tokenFile);
  }
  if (env.AEP_SOCKET === 'off') return undefined;
  return { socket: `${stateDir}/${SOCKET_FILE}` };
}

/**
 * Observe-only unless the operator gate is switched on (AEP_HERMES_CONTROL,
 * inherited from the environment Hermes runs in): then, and only then, a
 * daemon reply can reach Hermes. Gated off, whatever answers on the port,
 * the shim prints `{}`: no block, no context, ever.
 */
function gateOn(): boolean {
  return /^(1|true|yes|on)$/i.test(process.env.AEP_HERMES_CONTROL ?? '');
}

function timeoutMs(): number {
  const n = Number(process.env.AEP_SHIM_TIMEOUT_MS);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_TIMEOUT_MS;
}

/** stdin in one synchronous read (Hermes writes it to a pipe and closes it); streams only as a fallback. */
function readStdin(): Promise<Buffer> {
  try {
    return Promise.resolve(readFileSync(0));
  } catch {
    return readStdinStream();
  }
}

function readStdinStream(): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks)));
    process.stdin.on('error', () => resolve(Buffer.concat(chunks)));
  });
}

/** A reply is passed on only when it is exactly one JSON object. */
function validReply(text: string): string {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? JSON.stringify(v) : EMPTY;
  } catch {
    return EMPTY;
  }
}

/**
 * How one delivery ended. `delivered`: the daemon answered 200 (`reply` is
 * its body when that is one JSON object, else `{}`); `refused`: it answered
 * another status (4xx: it will never take this body; 5xx: it could not now);
 * `unreachable`: no connection, or it broke before an answer; `timeout`: no
 * answer within the deadline (the daemon may still have the hook).
 */
export type Outcome =
  | { readonly kind: 'delivered'; readonly reply: string }
  | { readonly kind: 'refused'; readonly status: number }
  | { readonly kind: 'unreachable' }
  | { readonly kind: 'timeout' };

const MAX_REPLY_BYTES = 1_048_576;

/** POST the envelope to the daemon once, within `ms`; never throws. */
export function deliver(body: Buffer, target: Target, ms: number): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const done = (o: Outcome) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      resolve(o);
    };
    const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': body.length };
    let url: URL | undefined;
    let options: RequestOptions;
    if ('socket' in target) options = { socketPath: target.socket, path: '/hook', headers: { ...headers, host: 'localhost' } };
    else {
      // the token goes over TCP only, and only to the URL it was configured for
      if (target.token) headers.authorization = `Bearer ${target.token}`;
      url = target.url;
      options = { headers };
    }
    const onResponse = (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_REPLY_BYTES) {
          req.destroy();
          done({ kind: 'delivered', reply: EMPTY });
        } else chunks.push(c);
      });
      res.on('end', () =>
        done(res.statusCode === 200 ? { kind: 'delivered', reply: validReply(Buffer.concat(chunks).toString('utf8')) } : { kind: 'refused', status: res.statusCode ?? 0 }),
      );
      res.on('error', () => done({ kind: 'unreachable' }));
    };
    const opts: RequestOptions = { ...options, method: 'POST', agent: false };
    const req = url ? request(url, opts, onResponse) : request(opts, onResponse);
    req.on('error', () => done({ kind: 'unreachable' }));
    timer = setTimeout(() => {
      req.destroy();
      done({ kind: 'timeout' });
    }, ms);
    req.end(body);
  });
}

let printed = false;
/** stdout gets exactly one JSON object, once, whatever happens after. */
function answer(out: string): void {
  if (printed) return;
  printed = true;
  process.stdout.write(out);
  process.exitCode = 0;
}

/** `node hook.cjs [--socket PATH | --url URL] [--state-dir DIR]`, or `hermes-aep hook …` with the same arguments. */
export async function runHook(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  // last resort: nothing this process does may fail the hook
  process.on('uncaughtException', () => answer(EMPTY));
  process.on('unhandledRejection', () => answer(EMPTY));
  let out = EMPTY;
  try {
    const body = await readStdin();
    const target = resolveTarget(argv, process.env);
    if (body.length > 0 && target) {
      const outcome = await deliver(body, target, timeoutMs());
      if (outcome.kind === 'delivered' && gateOn()) out = outcome.reply;
    }
  } catch {
    out = EMPTY;
  }
  answer(out);
}

if (require.main === module) void runHook();
