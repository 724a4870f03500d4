// The hook shim: Hermes runs it once per hook firing. It must start fast and
// can never fail the agent, so it imports only node:http and node:fs and
// answers `{}` on every failure path. stdout carries exactly one JSON object;
// nothing else. A hook the daemon provably did not take (down, starting,
// closing) is written to the spool for the daemon to ingest when it is back. CommonJS on purpose: run directly (`node hook.cjs`, what
// `install` registers) it skips the ESM loader, a measurable part of a Node
// start on every hook firing; `hermes-aep hook` loads the same file.
import { request } from 'node:http';
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';

const EMPTY = '{}';
const DEFAULT_TIMEOUT_MS = 5_000;

/** The daemon's /hook URL; anything but plain http is refused (no request is made). */
function target(): URL | undefined {
  const explicit = process.env.AEP_HOOK_URL;
  let url: URL;
  try {
    if (explicit) url = new URL(explicit);
    else {
      const host = process.env.AEP_HOST && process.env.AEP_HOST !== '0.0.0.0' ? process.env.AEP_HOST : '127.0.0.1';
      const port = process.env.AEP_PORT ?? '8393';
      url = new URL(`http://${host.includes(':') ? `[${host}]` : host}:${port}/hook`);
    }
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' ? url : undefined;
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

/** What became of one POST: the reply, and whether the daemon provably did not take the hook (then: spool it). */
interface Delivery {
  readonly reply: string;
  readonly spool: boolean;
}

/**
 * The daemon took the hook only if the whole request reached it and it did
 * not answer 5xx (a 503 while it starts, drains its spool or closes; a non-200
 * means not processed). A 4xx is a refusal of the hook itself: not spooled. A
 * timeout or a reset AFTER the request was fully handed to the OS is
 * ambiguous (the daemon may have processed it): not spooled, so never twice.
 */
function forward(body: Buffer, url: URL, ms: number): Promise<Delivery> {
  return new Promise((resolve) => {
    let settled = false;
    let sent = false;
    let timer: NodeJS.Timeout | undefined;
    const done = (s: string, spool = false) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      resolve({ reply: s, spool });
    };
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length }, agent: false },
      (res) => {
        if ((res.statusCode ?? 0) >= 500) {
          // not processed: stop sending (a 503 can come before the body is read) and spool
          req.destroy();
          return done(EMPTY, true);
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > 1_048_576) {
            req.destroy();
            done(EMPTY);
          } else chunks.push(c);
        });
        res.on('end', () => done(res.statusCode === 200 ? validReply(Buffer.concat(chunks).toString('utf8')) : EMPTY));
        res.on('error', () => done(EMPTY));
      },
    );
    req.on('finish', () => (sent = true));
    req.on('error', () => done(EMPTY, !sent));
    timer = setTimeout(() => {
      req.destroy();
      done(EMPTY, !sent);
    }, ms);
    req.end(body);
  });
}

const DEFAULT_SPOOL_MAX_BYTES = 256 * 1024 * 1024;
const DEFAULT_SPOOL_MAX_FILES = 100_000;

/** The state dir: argv `--state-dir`, then AEP_STATE_DIR, then ~/.aep/state/hermes-aep (the daemon's rule). */
function stateDir(): string {
  const argv = process.argv;
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--state-dir' && argv[i + 1]) return argv[i + 1]!;
    if (a.startsWith('--state-dir=') && a.length > 12) return a.slice(12);
  }
  if (process.env.AEP_STATE_DIR) return process.env.AEP_STATE_DIR;
  // node:os only when HOME is unset: the spool path loads nothing new in the usual case
  const home = process.env.HOME || (require('node:os') as typeof import('node:os')).homedir();
  return `${home}/.aep/state/hermes-aep`;
}

function limit(v: string | undefined, dflt: number): number {
  const n = v === undefined || v === '' ? NaN : Number(v);
  return Number.isInteger(n) && n >= 0 ? n : dflt;
}

const sizeOf = (file: string): number => statSync(file, { throwIfNoEntry: false })?.size ?? 0;

function writeAll(fd: number, buf: Buffer): void {
  for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
}

/**
 * Spool one hook the daemon could not take: `{stateDir}/spool/<key>.hook`,
 * key = zero-padded arrival ms, monotonic ns, pid, random (lexical order =
 * arrival order), written as `.<key>.tmp` and renamed, so the daemon only
 * ever sees whole files. Content: one JSON header line (arrival, byte count),
 * then the envelope bytes as Hermes wrote them. The cap is checked in O(1):
 * the ledgers `in.files`/`in.kib` (appended by shims) and `out.files`/`out.kib`
 * (appended by the daemon) count by their SIZE; a hook over the cap is dropped
 * and counted as one byte appended to `dropped`. Never throws.
 */
function spoolEnvelope(body: Buffer, arrivalMs: number, arrivalNs: bigint): void {
  let dir = '';
  let tmp = '';
  let kib = 0;
  try {
    dir = `${stateDir()}/spool`;
    const header = Buffer.from(`${JSON.stringify({ spool: 1, arrival: new Date(arrivalMs).toISOString(), arrival_ms: arrivalMs, bytes: body.length })}\n`);
    kib = Math.ceil((header.length + body.length) / 1024);
    const files = Math.max(0, sizeOf(`${dir}/in.files`) - sizeOf(`${dir}/out.files`));
    const used = Math.max(0, sizeOf(`${dir}/in.kib`) - sizeOf(`${dir}/out.kib`));
    if (files + 1 > limit(process.env.AEP_SPOOL_MAX_FILES, DEFAULT_SPOOL_MAX_FILES) || (used + kib) * 1024 > limit(process.env.AEP_SPOOL_MAX_BYTES, DEFAULT_SPOOL_MAX_BYTES)) {
      return countDrop(dir);
    }
    const key = `${String(arrivalMs).padStart(15, '0')}-${arrivalNs.toString().padStart(20, '0')}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
    tmp = `${dir}/.${key}.tmp`;
    let fd: number;
    try {
      fd = openSync(tmp, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      fd = openSync(tmp, 'wx', 0o600);
    }
    try {
      writeAll(fd, header);
      writeAll(fd, body);
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

export async function runHook(): Promise<void> {
  // last resort: nothing this process does may fail the hook
  process.on('uncaughtException', () => answer(EMPTY));
  process.on('unhandledRejection', () => answer(EMPTY));
  const arrivalMs = Date.now();
  const arrivalNs = process.hrtime.bigint();
  let out = EMPTY;
  try {
    const body = await readStdin();
    const url = target();
    if (body.length > 0 && url) {
      const { reply, spool } = await forward(body, url, timeoutMs());
      if (spool) {
        answer(EMPTY);
        spoolEnvelope(body, arrivalMs, arrivalNs);
      }
      if (gateOn()) out = reply;
    }
  } catch {
    out = EMPTY;
  }
  answer(out);
}

if (require.main === module) void runHook();
