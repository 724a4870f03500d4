// The hook shim: Hermes runs it once per hook firing. It must start fast and
// can never fail the agent, so it imports only node:http and node:fs and
// answers `{}` on every failure path. stdout carries exactly one JSON object;
// nothing else. CommonJS on purpose: run directly (`node hook.cjs`, what
// `install` registers) it skips the ESM loader, a measurable part of a Node
// start on every hook firing; `hermes-aep hook` loads the same file.
import { request } from 'node:http';
import { readFileSync } from 'node:fs';

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

function forward(body: Buffer, url: URL, ms: number): Promise<string> {
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const done = (s: string) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      resolve(s);
    };
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length }, agent: false },
      (res) => {
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
    req.on('error', () => done(EMPTY));
    timer = setTimeout(() => {
      req.destroy();
      done(EMPTY);
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

export async function runHook(): Promise<void> {
  // last resort: nothing this process does may fail the hook
  process.on('uncaughtException', () => answer(EMPTY));
  process.on('unhandledRejection', () => answer(EMPTY));
  let out = EMPTY;
  try {
    const body = await readStdin();
    const url = target();
    if (body.length > 0 && url) {
      const reply = await forward(body, url, timeoutMs());
      if (gateOn()) out = reply;
    }
  } catch {
    out = EMPTY;
  }
  answer(out);
}

if (require.main === module) void runHook();
