// The hook shim: Hermes runs it once per hook firing, with whatever `node` is on its PATH (older releases than the engines floor
// included: test/integration/shim/old-node.test.ts). It must start fast and never fail the agent: it imports only node:net and node:fs
// (node:os only when HOME is unset), answers `{}` on every failure path, and stdout carries exactly one JSON object. A hook the
// daemon provably did not take (down, starting, closing) goes to the spool for the daemon to ingest when it is back. One CommonJS
// file on purpose: `install` copies it alone, and run directly (`node hook.cjs`) it skips the ESM loader; `hermes-aep hook` loads it too.
// Two opt-in gates (shimGates) let a daemon reply through: a held `pre_tool_call` (control) and a `pre_llm_call` context (instruct); with
// both off it neither reads the hook's name nor waits longer, and Hermes gets `{}`.
import { connect } from 'node:net';
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';

const EMPTY = '{}';
const DEFAULT_TIMEOUT_MS = 5_000;
const DEFAULT_ATTENTION_MS = 55_000; // the daemon's hold window unless told otherwise (AEP_ATTENTION_TIMEOUT_MS)
const HOLD_MARGIN_MS = 3_000; // a held pre_tool_call waits this much longer than the window, so the daemon's release arrives in time
/** the longest a Node timer waits: past it Node fires after 1 ms (and warns on stderr) */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * A shim setting read by hand, by the daemon's rule for whole numbers (decimal digits, blanks around them allowed) and within
 * [min, max]; undefined (the caller's default) for anything else: `abc`, `-1`, `1e3`, `0x10`, `1.5`, empty or blank. A bad value
 * never stops the shim, which must always answer `{}`.
 */
function wholeNumber(raw: string | undefined, min: number, max: number): number | undefined {
  const n = raw !== undefined && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  return n >= min && n <= max ? n : undefined;
}
const HOLD_HEADER = 'x-hermes-aep-hold-ms';
/** sent on a `pre_llm_call` under instruct: this transport passes a context reply to Hermes, so the daemon may deliver steering in it */
const STEER_HEADER = 'x-hermes-aep-steer';
/** the spool key chosen before sending: a hook the daemon held after a failed write (503) is spooled under it, and recognised */
const SPOOL_KEY_HEADER = 'x-hermes-aep-spool-key';
const SOCKET_FILE = 'hook.sock';
const TOKEN_FILE = 'hook-token';

/** Where the envelope goes: the daemon's private Unix socket, or (compose) its TCP /hook URL with the token. */
export type Target = { readonly socket: string } | { readonly url: URL; readonly token: string | undefined };

/**
 * `--state-dir DIR`, and the last of `--socket PATH` / `--url URL` (it wins when both are given); the gates `--control`, `--instruct`
 * and `--attention-timeout-ms MS`, each the same as its environment variable (AEP_HERMES_CONTROL, AEP_INSTRUCT, AEP_ATTENTION_TIMEOUT_MS)
 * and taking precedence over it.
 */
type ShimArgs = {
  stateDir?: string;
  conn?: { readonly socket: string } | { readonly url: string };
  control?: true;
  instruct?: true;
  attentionMs?: string;
};

const VALUE_OPTIONS = new Set(['--socket', '--url', '--state-dir', '--attention-timeout-ms']);

/** `--socket PATH`, `--url URL`, `--state-dir DIR`, `--attention-timeout-ms MS` (or `--name=value`), `--control`, `--instruct`; anything else is ignored. */
function parseArgs(argv: readonly string[]): ShimArgs {
  const out: ShimArgs = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--control') out.control = true;
    else if (a === '--instruct') out.instruct = true;
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(0, eq) : a;
    if (!VALUE_OPTIONS.has(name)) continue;
    const value = eq > 0 ? a.slice(eq + 1) : argv[++i];
    if (!value) continue;
    if (name === '--state-dir') out.stateDir = value;
    else if (name === '--attention-timeout-ms') out.attentionMs = value;
    else out.conn = name === '--socket' ? { socket: value } : { url: value };
  }
  return out;
}

/** The state dir: argv `--state-dir`, then AEP_STATE_DIR (empty reads as unset, as in the daemon), then `~/.aep/state/hermes-aep` (HOME first: no node:os). */
export function shimStateDir(argv: readonly string[], env: NodeJS.ProcessEnv): string {
  const dir = parseArgs(argv).stateDir || env.AEP_STATE_DIR;
  return dir || `${process.env.HOME || (require('node:os') as typeof import('node:os')).homedir()}/.aep/state/hermes-aep`;
}

/** A /hook URL over plain http, with the token read from its file (absent or malformed → sent without). */
function urlTarget(raw: string, tokenFile: string): Target | undefined {
  const url = orElse(() => new URL(raw), undefined);
  if (url?.protocol !== 'http:') return undefined;
  return { url, token: orElse(() => /^[0-9a-f]{64}$/.exec(readFileSync(tokenFile, 'utf8').trim())?.[0], undefined) };
}

/** `fn()`, or `fallback` when it throws. */
function orElse<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

/**
 * The daemon's address: argv first (`--socket PATH`, `--url URL`, then the socket under `--state-dir DIR`), then the environment (`AEP_SOCKET`,
 * `AEP_HOOK_URL`, the legacy `AEP_HOST`/`AEP_PORT`, then the socket under `AEP_STATE_DIR`), then the socket under the default state dir. A URL
 * must be plain http; its token comes from `{state dir}/hook-token` (or `AEP_TOKEN_FILE`) and is sent over TCP only.
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

const truthy = (v: string | undefined): boolean => /^(1|true|yes|on)$/i.test(v ?? '');

/**
 * The two opt-in gates, from argv (what install records) or else from Hermes's environment: `control` (AEP_HERMES_CONTROL, the
 * operator-deny gate: a `pre_tool_call` is held until the daemon answers) and `instruct` (AEP_INSTRUCT, steering: a `pre_llm_call`
 * reply may carry context). `holdMs`: how long a held `pre_tool_call` waits, the daemon's window (AEP_ATTENTION_TIMEOUT_MS) + 3 s.
 */
export interface Gates {
  readonly control: boolean;
  readonly instruct: boolean;
  readonly holdMs: number;
}

export function shimGates(argv: readonly string[], env: NodeJS.ProcessEnv): Gates {
  const args = parseArgs(argv);
  const holdWindow = wholeNumber(args.attentionMs ?? env.AEP_ATTENTION_TIMEOUT_MS, 1, MAX_TIMER_MS - HOLD_MARGIN_MS);
  return {
    control: args.control === true || truthy(env.AEP_HERMES_CONTROL),
    instruct: args.instruct === true || truthy(env.AEP_INSTRUCT),
    holdMs: (holdWindow ?? DEFAULT_ATTENTION_MS) + HOLD_MARGIN_MS,
  };
}

/** The hook's name, read from the head of the envelope (Hermes's json.dumps writes `{"hook_event_name": "…", …` first); not parsed whole. */
export function hookName(body: Buffer): string | undefined {
  return /^\s*\{\s*"hook_event_name"\s*:\s*"([a-z_]{1,64})"/.exec(body.toString('latin1', 0, 128))?.[1];
}

/**
 * What Hermes may be told, for a reply the daemon gave (`reply`: one JSON object): only what the gate that permits it allows, in the shape
 * Hermes's own parser reads. `pre_tool_call` under `control`: a block (`action` or `decision` "block"; its message, or Hermes's default);
 * `pre_llm_call` under `instruct`: `{"context": …}` with some text. Anything else, whatever the daemon said: `{}`.
 */
export function permitted(hook: string | undefined, gates: Gates, reply: string): string {
  if (reply === EMPTY || !((hook === 'pre_tool_call' && gates.control) || (hook === 'pre_llm_call' && gates.instruct))) return EMPTY;
  const v = orElse(() => JSON.parse(reply) as Record<string, unknown>, {});
  if (hook === 'pre_llm_call') return typeof v.context === 'string' && v.context.trim() ? JSON.stringify({ context: v.context }) : EMPTY;
  for (const [key, first, second] of [
    ['action', 'message', 'reason'],
    ['decision', 'reason', 'message'],
  ] as const) {
    if (v[key] !== 'block') continue;
    const m = v[first] || v[second];
    return JSON.stringify({ action: 'block', message: typeof m === 'string' && m ? m : 'Blocked by shell hook.' });
  }
  return EMPTY;
}

/** AEP_SHIM_TIMEOUT_MS: how long a hook waits for the daemon (the default when unset or bad). */
export function shimTimeoutMs(env: NodeJS.ProcessEnv): number {
  return wholeNumber(env.AEP_SHIM_TIMEOUT_MS, 1, MAX_TIMER_MS) ?? DEFAULT_TIMEOUT_MS;
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
  const v = orElse((): unknown => JSON.parse(text), undefined);
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? JSON.stringify(v) : EMPTY;
}

/**
 * How one delivery ended. `delivered`: the daemon answered 200 (`reply` is its body when that is one JSON object, else `{}`); `refused`: it
 * answered another status (4xx: it will never take this body; 5xx: it could not now); `unreachable`: no connection, or it broke before an
 * answer; `timeout`: no answer within the deadline (the daemon may still have the hook). `sent`: the whole request had been handed to the OS.
 */
export type Outcome =
  | { readonly kind: 'delivered'; readonly reply: string }
  | { readonly kind: 'refused'; readonly status: number }
  | { readonly kind: 'unreachable'; readonly sent: boolean }
  | { readonly kind: 'timeout'; readonly sent: boolean };

/**
 * The daemon provably did not take the hook, so the spool may: it answered 5xx (not processed: starting, draining its spool, closing, its log
 * failing), or the request never fully reached the OS. A 4xx refuses the hook itself; a timeout or reset AFTER the whole request was handed
 * over is ambiguous (it may have been processed): neither is spooled, so a hook is never recorded twice.
 */
export function shouldSpool(o: Outcome): boolean {
  if (o.kind === 'refused') return o.status >= 500;
  return o.kind !== 'delivered' && !o.sent;
}

const MAX_REPLY_BYTES = 1_048_576;
const MAX_HEAD_BYTES = 16_384; // node:http's own default bound on a response head

/** A response head (latin1, without its blank line), strictly: HTTP/1.x, a final status, token field names, CRLF, no folding, one Content-Length. */
function parseHead(text: string): { readonly status: number; readonly length: number | undefined; readonly coded: boolean } | undefined {
  const [first = '', ...fields] = text.split('\r\n');
  const m = /^HTTP\/1\.[01] ([2-5]\d\d)(?: [\t\x20-\x7e\x80-\xff]*)?$/.exec(first);
  let length: number | undefined;
  let coded = false;
  for (const f of m ? fields : []) {
    const h = /^([-!#$%&'*+.^`|~\w]+):[\t ]*([\t\x20-\x7e\x80-\xff]*?)[\t ]*$/.exec(f);
    if (!h) return undefined;
    const name = h[1]!.toLowerCase();
    if (name === 'transfer-encoding') coded = true;
    else if (name === 'content-length') {
      if (!/^\d{1,15}$/.test(h[2]!) || (length !== undefined && length !== Number(h[2]))) return undefined;
      length = Number(h[2]);
    }
  }
  return m ? { status: Number(m[1]), length, coded } : undefined;
}

/** The request head: Host localhost over the socket; over TCP the URL's host and path, and its token if any; the hold header when held. */
function requestHead(target: Target, bytes: number, holdMs: number | undefined, steer: boolean, key: string | undefined): string {
  const tcp = 'url' in target;
  const auth = tcp && target.token ? `Authorization: Bearer ${target.token}\r\n` : '';
  const line = tcp ? `POST ${target.url.pathname}${target.url.search} HTTP/1.1\r\nHost: ${target.url.host}` : 'POST /hook HTTP/1.1\r\nHost: localhost';
  const hold = holdMs === undefined ? '' : `${HOLD_HEADER}: ${holdMs}\r\n`;
  const steers = steer ? `${STEER_HEADER}: 1\r\n` : '';
  const spool = key === undefined ? '' : `${SPOOL_KEY_HEADER}: ${key}\r\n`;
  return `${line}\r\n${auth}Content-Type: application/json\r\nContent-Length: ${bytes}\r\n${hold}${steers}${spool}Connection: close\r\n\r\n`;
}

/**
 * POST the envelope once, within `ms`, over plain node:net (node:http costs a fresh process more than the exchange); never throws. Never
 * half-closed (the daemon's HTTP server drops a request whose client ends its side); the response is read to its Content-Length, or to EOF.
 * The status decides at the end of the head (a 5xx can come before the body is read: sending stops); a coded 200 body (Transfer-Encoding) is
 * not decoded: `{}`. A malformed or cut response: `unreachable`. `holdMs`: sent as `x-hermes-aep-hold-ms`, telling the daemon it may hold
 * the reply (a gated `pre_tool_call`); without it the daemon never holds. `steer`: sent as `x-hermes-aep-steer: 1` (a `pre_llm_call`
 * under instruct), telling the daemon the context reply reaches Hermes; without it the daemon delivers no instruction.
 */
export function deliver(body: Buffer, target: Target, ms: number, holdMs?: number, steer = false, key?: string): Promise<Outcome> {
  return new Promise((resolve) => {
    let sent = false;
    let head: ReturnType<typeof parseHead>;
    let got: Buffer = Buffer.alloc(0); // the head so far, then the body so far
    const sock = 'url' in target ? connect(Number(target.url.port || 80), target.url.hostname.replace(/^\[(.*)\]$/, '$1')) : connect(target.socket);
    const timer = setTimeout(() => done({ kind: 'timeout', sent }), ms);
    const done = (o: Outcome) => {
      // the first outcome wins (a promise settles once)
      clearTimeout(timer);
      sock.destroy();
      resolve(o);
    };
    const reply = (bytes: Buffer) => done({ kind: 'delivered', reply: got.length > MAX_REPLY_BYTES ? EMPTY : validReply(bytes.toString('utf8')) });
    sock.on('data', (c: Buffer) => {
      got = got.length ? Buffer.concat([got, c]) : c;
      if (!head) {
        const end = got.indexOf('\r\n\r\n');
        if (end < 0) return got.length > MAX_HEAD_BYTES ? done({ kind: 'unreachable', sent }) : undefined;
        head = parseHead(got.toString('latin1', 0, end));
        if (!head) return done({ kind: 'unreachable', sent });
        if (head.status !== 200) return done({ kind: 'refused', status: head.status });
        if (head.coded) return done({ kind: 'delivered', reply: EMPTY });
        got = got.subarray(end + 4);
      }
      if (got.length > MAX_REPLY_BYTES || got.length >= (head.length ?? Infinity)) reply(got.subarray(0, head.length));
    });
    sock.on('end', () => (head && head.length === undefined ? reply(got) : done({ kind: 'unreachable', sent })));
    sock.on('error', () => done({ kind: 'unreachable', sent }));
    sock.cork(); // head and body in one writev, as node:http sends them: a peer that answers on the head alone still gets the body
    sock.write(requestHead(target, body.length, holdMs, steer, key));
    sock.write(body, (err) => (sent = !err)); // once the OS has the last byte
    sock.uncork();
  });
}

function limit(v: string | undefined, dflt: number): number {
  return wholeNumber(v, 0, Number.MAX_SAFE_INTEGER) ?? dflt;
}

const sizeOf = (file: string): number => statSync(file, { throwIfNoEntry: false })?.size ?? 0;

function writeAll(fd: number, buf: Buffer): void {
  for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off, buf.length - off);
}

/**
 * Spool one hook the daemon could not take: `{stateDir}/spool/<key>.hook`, key = zero-padded arrival ms, monotonic ns, pid, random (lexical
 * order = arrival order), written as `.<key>.tmp` and renamed, so the daemon only ever sees whole files. Content: one JSON header line
 * (arrival, byte count), then the envelope bytes as Hermes wrote them. The cap is checked in O(1): the ledgers `in.files`/`in.kib` (appended
 * by shims) and `out.files`/`out.kib` (appended by the daemon) count by their SIZE; a hook over the cap (or not written: a full
 * disk) is dropped and counted as one byte appended to `dropped`, or, when not even that byte fits, an empty `dropped.<key>`. Never throws.
 */
/** The hook's spool file name stem, chosen before sending (sent as x-hermes-aep-spool-key). */
export function spoolKey(arrivalMs: number, arrivalNs: bigint): string {
  return `${String(arrivalMs).padStart(15, '0')}-${arrivalNs.toString().padStart(20, '0')}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
}

function spoolEnvelope(stateDir: string, body: Buffer, arrivalMs: number, key: string): void {
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
    if (files + 1 > maxFiles || (used + kib) * 1024 > maxBytes) return countDrop(dir, key);
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
    if (tmp) orElse(() => unlinkSync(tmp), undefined);
    if (dir) countDrop(dir, key);
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

/**
 * Count one dropped hook: a byte appended to `dropped`. On a full disk that byte may find no room (a new file, or
 * a page boundary), while an empty file still can be made (it takes no data block): `dropped.<key>`, one per hook,
 * which the daemon counts with `dropped` and folds into it once it can write.
 */
function countDrop(dir: string, key: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    appendFileSync(`${dir}/dropped`, '.', { mode: 0o600 });
  } catch {
    try {
      closeSync(openSync(`${dir}/dropped.${key}`, 'wx', 0o600));
    } catch {
      /* not even the count can be kept */
    }
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

/** `node hook.cjs [--socket PATH | --url URL] [--state-dir DIR] [--control] [--instruct] [--attention-timeout-ms MS]`, or `hermes-aep hook …`. */
export async function runHook(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  // last resort: nothing this process does may fail the hook
  process.on('uncaughtException', () => answer(EMPTY));
  process.on('unhandledRejection', () => answer(EMPTY));
  const arrivalMs = Date.now();
  const key = spoolKey(arrivalMs, process.hrtime.bigint());
  let out = EMPTY;
  try {
    const body = await readStdin();
    const target = resolveTarget(argv, process.env);
    if (body.length > 0 && target) {
      // both gates off (the default): the hook's name is not even read, and nothing differs from observation
      const gates = shimGates(argv, process.env);
      const hook = gates.control || gates.instruct ? hookName(body) : undefined;
      const hold = gates.control && hook === 'pre_tool_call' ? gates.holdMs : undefined;
      const outcome = await deliver(body, target, hold ?? shimTimeoutMs(process.env), hold, gates.instruct && hook === 'pre_llm_call', key);
      if (shouldSpool(outcome)) {
        // Hermes is answered first; the file is written after
        answer(EMPTY);
        spoolEnvelope(shimStateDir(argv, process.env), body, arrivalMs, key);
      }
      if (outcome.kind === 'delivered' && hook !== undefined) out = permitted(hook, gates, outcome.reply);
    }
  } catch {
    out = EMPTY;
  }
  answer(out);
}

// run directly: exit once stdout has the answer (skips Node's teardown, ~2 ms a hook, measured), not before (some pipes write asynchronously)
if (require.main === module) void runHook().then(() => process.stdout.write('', () => process.exit()));
