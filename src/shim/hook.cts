// The hook shim: Hermes runs it once per hook firing, with whatever `node` is on its PATH (older releases than
// the engines floor included: test/unit/shim/old-node.test.ts). It must start fast and never fail the agent: it
// imports only node:http and node:fs (node:os only when HOME is unset), answers `{}` on every failure path, and
// stdout carries exactly one JSON object. A hook the daemon provably did not take (down, starting, closing) goes
// to the spool for the daemon to ingest when it is back. One CommonJS file on purpose: `install` copies this file
// alone, and run directly (`node hook.cjs`) it skips the ESM loader; `hermes-aep hook` loads the same file.
import { request, type IncomingMessage, type RequestOptions } from 'node:http';
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';

const EMPTY = '{}';
const DEFAULT_TIMEOUT_MS = 5_000;
const SOCKET_FILE = 'hook.sock';
const TOKEN_FILE = 'hook-token';

/** Where the envelope goes: the daemon's private Unix socket, or (compose) its TCP /hook URL with the token. */
export type Target = { readonly socket: string } | { readonly url: URL; readonly token: string | undefined };

/** `--state-dir DIR`, and the last of `--socket PATH` / `--url URL` (it wins when both are given). */
type ShimArgs = { stateDir?: string; conn?: { readonly socket: string } | { readonly url: string } };

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
    else out.conn = name === '--socket' ? { socket: value } : { url: value };
  }
  return out;
}

/**
 * The state dir: argv `--state-dir`, then AEP_STATE_DIR (empty reads as unset, as the daemon reads it), then
 * `~/.aep/state/hermes-aep` (HOME first: no node:os on the hot path).
 */
export function shimStateDir(argv: readonly string[], env: NodeJS.ProcessEnv): string {
  const dir = parseArgs(argv).stateDir || env.AEP_STATE_DIR;
  return dir || `${process.env.HOME || (require('node:os') as typeof import('node:os')).homedir()}/.aep/state/hermes-aep`;
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
  try {
    return { url, token: /^[0-9a-f]{64}$/.exec(readFileSync(tokenFile, 'utf8').trim())?.[0] };
  } catch {
    return { url, token: undefined };
  }
}

/**
 * The daemon's address: argv first (`--socket PATH`, `--url URL`, then the socket under `--state-dir DIR`), then the
 * environment (`AEP_SOCKET`, `AEP_HOOK_URL`, the legacy `AEP_HOST`/`AEP_PORT`, then the socket under
 * `AEP_STATE_DIR`), then the socket under the default state dir. A URL must be plain http; its token comes from
 * `{state dir}/hook-token` (or `AEP_TOKEN_FILE`) and is sent over TCP only.
 */
export function resolveTarget(argv: readonly string[], env: NodeJS.ProcessEnv): Target | undefined {
  const args = parseArgs(argv);
  const stateDir = shimStateDir(argv, env);
  const tokenFile = args.stateDir ? `${args.stateDir}/${TOKEN_FILE}` : env.AEP_TOKEN_FILE || `${stateDir}/${TOKEN_FILE}`;
  if (args.conn) return 'socket' in args.conn ? args.conn : urlTarget(args.conn.url, tokenFile);
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
 * Observe-only unless the operator gate is switched on (AEP_HERMES_CONTROL, inherited from the environment Hermes
 * runs in): then, and only then, a daemon reply can reach Hermes. Gated off, whatever answers on the port, the shim
 * prints `{}`: no block, no context, ever.
 */
function gateOn(): boolean {
  return /^(1|true|yes|on)$/i.test(process.env.AEP_HERMES_CONTROL ?? '');
}

function timeoutMs(): number {
  const n = Number(process.env.AEP_SHIM_TIMEOUT_MS);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_TIMEOUT_MS;
}

/** stdin in one synchronous read (Hermes writes it to a pipe and closes it); streamed only as a fallback. */
function readStdin(): Promise<Buffer> {
  try {
    return Promise.resolve(readFileSync(0));
  } catch {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    return new Promise((resolve) => ['end', 'error'].forEach((e) => process.stdin.on(e, () => resolve(Buffer.concat(chunks)))));
  }
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
 * How one delivery ended. `delivered`: the daemon answered 200 (`reply` is its body when that is one JSON object,
 * else `{}`); `refused`: it answered another status (4xx: it will never take this body; 5xx: it could not now);
 * `unreachable`: no connection, or it broke before an answer; `timeout`: no answer within the deadline (the daemon
 * may still have the hook). `sent`: the whole request had been handed to the OS.
 */
export type Outcome =
  | { readonly kind: 'delivered'; readonly reply: string }
  | { readonly kind: 'refused'; readonly status: number }
  | { readonly kind: 'unreachable'; readonly sent: boolean }
  | { readonly kind: 'timeout'; readonly sent: boolean };

/**
 * The daemon provably did not take the hook, so the spool may: it answered 5xx (not processed: starting, draining its
 * spool, closing, its log failing), or the request never fully reached the OS. A 4xx refuses the hook itself; a
 * timeout or reset AFTER the whole request was handed over is ambiguous (it may have been processed): neither is
 * spooled, so a hook is never recorded twice.
 */
export function shouldSpool(o: Outcome): boolean {
  if (o.kind === 'refused') return o.status >= 500;
  return o.kind !== 'delivered' && !o.sent;
}

const MAX_REPLY_BYTES = 1_048_576;

/** POST the envelope to the daemon once, within `ms`; never throws. */
export function deliver(body: Buffer, target: Target, ms: number): Promise<Outcome> {
  return new Promise((resolve) => {
    let sent = false;
    let timer: NodeJS.Timeout | undefined; // eslint-disable-line prefer-const -- assigned after `done`, which clears it, is defined
    // the first outcome wins (a promise settles once)
    const done = (o: Outcome) => {
      clearTimeout(timer);
      resolve(o);
    };
    const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': body.length };
    // the token goes over TCP only, and only to the URL it was configured for
    if ('url' in target && target.token) headers.authorization = `Bearer ${target.token}`;
    const opts: RequestOptions = { method: 'POST', agent: false, headers };
    const onResponse = (res: IncomingMessage) => {
      if ((res.statusCode ?? 0) >= 500) {
        // not processed: stop sending (a 503 can come before the body is read)
        req.destroy();
        return done({ kind: 'refused', status: res.statusCode ?? 500 });
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_REPLY_BYTES) {
          req.destroy();
          done({ kind: 'delivered', reply: EMPTY });
        } else chunks.push(c);
      });
      res.on('end', () => {
        const reply = validReply(Buffer.concat(chunks).toString('utf8'));
        done(res.statusCode === 200 ? { kind: 'delivered', reply } : { kind: 'refused', status: res.statusCode ?? 0 });
      });
      res.on('error', () => done({ kind: 'unreachable', sent }));
    };
    const req =
      'url' in target
        ? request(target.url, opts, onResponse)
        : request({ ...opts, socketPath: target.socket, path: '/hook', headers: { ...headers, host: 'localhost' } }, onResponse);
    req.on('finish', () => (sent = true));
    req.on('error', () => done({ kind: 'unreachable', sent }));
    timer = setTimeout(() => {
      req.destroy();
      done({ kind: 'timeout', sent });
    }, ms);
    req.end(body);
  });
}

function limit(v: string | undefined, dflt: number): number {
  const n = v === undefined || v === '' ? NaN : Number(v);
  return Number.isInteger(n) && n >= 0 ? n : dflt;
}

const sizeOf = (file: string): number => statSync(file, { throwIfNoEntry: false })?.size ?? 0;

function writeAll(fd: number, buf: Buffer): void {
  for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off, buf.length - off);
}

/**
 * Spool one hook the daemon could not take: `{stateDir}/spool/<key>.hook`, key = zero-padded arrival ms, monotonic
 * ns, pid, random (lexical order = arrival order), written as `.<key>.tmp` and renamed, so the daemon only ever sees
 * whole files. Content: one JSON header line (arrival, byte count), then the envelope bytes as Hermes wrote them. The
 * cap is checked in O(1): the ledgers `in.files`/`in.kib` (appended by shims) and `out.files`/`out.kib` (appended by
 * the daemon) count by their SIZE; a hook over the cap is dropped and counted as one byte appended to `dropped`.
 * Never throws.
 */
function spoolEnvelope(stateDir: string, body: Buffer, arrivalMs: number, arrivalNs: bigint): void {
  let dir = '';
  let tmp = '';
  let kib: number | undefined;
  try {
    dir = `${stateDir}/spool`;
    const header = Buffer.from(`${JSON.stringify({ spool: 1, arrival: new Date(arrivalMs).toISOString(), arrival_ms: arrivalMs, bytes: body.length })}\n`);
    kib = Math.ceil((header.length + body.length) / 1024);
    const files = Math.max(0, sizeOf(`${dir}/in.files`) - sizeOf(`${dir}/out.files`));
    const used = Math.max(0, sizeOf(`${dir}/in.kib`) - sizeOf(`${dir}/out.kib`));
    const maxFiles = limit(process.env.AEP_SPOOL_MAX_FILES, 100_000);
    const maxBytes = limit(process.env.AEP_SPOOL_MAX_BYTES, 256 * 1024 * 1024);
    if (files + 1 > maxFiles || (used + kib) * 1024 > maxBytes) return countDrop(dir);
    const key = `${String(arrivalMs).padStart(15, '0')}-${arrivalNs.toString().padStart(20, '0')}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
    tmp = `${dir}/.${key}.tmp`;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      for (const buf of [header, body]) writeAll(fd, buf);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, `${dir}/${key}.hook`);
  } catch {
    // disk full, no permission: the hook is lost; count it if the disk still lets us
    try {
      if (tmp) unlinkSync(tmp);
    } catch {
      /* nothing more to do */
    }
    if (dir) countDrop(dir);
    return;
  }
  try {
    // after the rename: a crash before these lines only makes the cap a little lenient
    appendFileSync(`${dir}/in.files`, '.', { mode: 0o600 });
    appendFileSync(`${dir}/in.kib`, Buffer.alloc(kib, 46), { mode: 0o600 });
  } catch {
    /* the hook is spooled; only the ledger missed it */
  }
}

function countDrop(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    appendFileSync(`${dir}/dropped`, '.', { mode: 0o600 });
  } catch {
    /* not even the count can be kept */
  }
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
  const arrivalMs = Date.now();
  const arrivalNs = process.hrtime.bigint();
  let out = EMPTY;
  try {
    const body = await readStdin();
    const target = resolveTarget(argv, process.env);
    if (body.length > 0 && target) {
      const outcome = await deliver(body, target, timeoutMs());
      if (shouldSpool(outcome)) {
        // Hermes is answered first; the file is written after
        answer(EMPTY);
        spoolEnvelope(shimStateDir(argv, process.env), body, arrivalMs, arrivalNs);
      }
      if (outcome.kind === 'delivered' && gateOn()) out = outcome.reply;
    }
  } catch {
    out = EMPTY;
  }
  answer(out);
}

if (require.main === module) void runHook();
