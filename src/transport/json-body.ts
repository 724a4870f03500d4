import { Worker } from 'node:worker_threads';
import { scanJson, type ScanLimits } from './json-scan.js';
import type { ErrorCode } from '../core/errors.js';
import { Assembler, type Part } from './json-parts.js';

/**
 * Bounded JSON parsing for hook bodies. Every body is scanned first (nodes,
 * depth: json-scan.ts) and refused past the caps before anything is built.
 * Small bodies are then parsed in place; large ones (Hermes's `pre_llm_call`
 * carries the whole conversation) are scanned and parsed on a worker thread,
 * so decoding and parsing tens of megabytes never holds up other hooks: the
 * daemon's own thread only receives the finished value, in parts of a few MB,
 * one per event-loop turn (json-parts.ts).
 */

/** Bodies up to this size are parsed on the daemon's thread (a few ms at most). */
export const INLINE_PARSE_MAX_BYTES = 1024 * 1024;
/** A large value comes back from the worker in parts of about this size, one per event-loop turn. */
export const PART_BYTES = 4 * 1024 * 1024;
/** A worker idle this long is stopped, giving back the memory a large parse used. */
const WORKER_IDLE_MS = 10_000;
/**
 * Bytes of large bodies (over the inline size) being read and parsed at once,
 * at most (and never less than one body of AEP_MAX_BODY_BYTES): past it a new
 * large body is refused 503 (`busy`) before the rest of it is kept, and the
 * shim spools it for the spool ingest, which takes one body at a time. Ten
 * 60 MB bodies at once otherwise cost gigabytes the process then keeps.
 */
export const LARGE_BODY_BUDGET_BYTES = 128 * 1024 * 1024;

/** The catalogue's codes (core/errors.ts) a body may be refused with before or while it is parsed. */
export type BodyRefusalCode = Extract<ErrorCode, 'too-deep' | 'too-many-nodes' | 'empty-body' | 'parser-unavailable' | 'busy'>;

/** A body refused before or while parsing; `code` picks the fixed reply (server.ts). */
export class BodyRefusal extends Error {
  constructor(readonly code: BodyRefusalCode) {
    super(code);
    this.name = 'BodyRefusal';
  }
}

const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/**
 * Values this module parsed, with the nesting the scan measured (levels of
 * objects/arrays), so a later depth check need not walk them again.
 */
const scannedDepth = new WeakMap<object, number>();

/** The nesting levels measured when `value` was parsed here; undefined for anything else. */
export function knownDepth(value: unknown): number | undefined {
  return typeof value === 'object' && value !== null ? scannedDepth.get(value) : undefined;
}

/**
 * The same stripping as fastify's `onProtoPoisoning/onConstructorPoisoning: 'remove'`:
 * `__proto__` keys, and `constructor` keys holding a `prototype`, are dropped (iteratively).
 */
function stripPoisonKeys(root: unknown): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
      continue;
    }
    const o = v as Record<string, unknown>;
    if (hasOwn(o, '__proto__')) delete o.__proto__;
    const ctor = hasOwn(o, 'constructor') ? o.constructor : undefined;
    if (typeof ctor === 'object' && ctor !== null && hasOwn(ctor, 'prototype')) Reflect.deleteProperty(o, 'constructor');
    for (const k in o) stack.push(o[k]);
  }
}

/**
 * Scan, then parse: throws a BodyRefusal past the caps, a SyntaxError for
 * anything that is not JSON. Synchronous; the worker runs exactly this.
 */
export function parseBounded(bytes: Uint8Array, limits: ScanLimits): unknown {
  if (bytes.byteLength === 0) throw new BodyRefusal('empty-body');
  const scan = scanJson(bytes, limits);
  if (!scan.ok) throw new BodyRefusal(scan.reason);
  let text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === '') throw new BodyRefusal('empty-body');
  const value: unknown = JSON.parse(text);
  if (scan.suspectKeys) stripPoisonKeys(value);
  if (typeof value === 'object' && value !== null) scannedDepth.set(value, scan.maxDepth);
  return value;
}

/** Main thread → worker: a body arrives in pieces, then ends (or is dropped). */
export type WorkerRequest =
  | { readonly type: 'chunk'; readonly id: number; readonly bytes: Uint8Array }
  | { readonly type: 'end'; readonly id: number; readonly limits: ScanLimits }
  | { readonly type: 'abort'; readonly id: number }
  /** the daemon took the last batch of parts: send the next */
  | { readonly type: 'next'; readonly id: number };

/** What the worker answers for one body: the value whole, or in batches of parts (json-parts.ts). */
export type WorkerReply =
  { id: number; ok: true; parts: Part[]; more: boolean; depth?: number } | { id: number; ok: false; refusal?: BodyRefusalCode; syntax?: true };

export interface JsonBodyParserOptions extends ScanLimits {
  /** the largest body accepted (AEP_MAX_BODY_BYTES) */
  readonly maxBytes: number;
  /** the compiled worker module (json-worker.js next to this file by default) */
  readonly workerUrl?: URL;
  readonly inlineMaxBytes?: number;
  /** LARGE_BODY_BUDGET_BYTES by default */
  readonly largeBudgetBytes?: number;
}

/** Fastify's own refusals for the body framing, so the replies stay exactly as they were. */
export interface FramingErrors {
  tooLarge(): Error;
  badLength(): Error;
}

interface Job {
  readonly id: number;
  readonly worker: Worker;
}

/**
 * Reads and parses request bodies with bounded work on the daemon's thread.
 * A small body (up to 1 MiB) is collected and parsed in place; a larger one
 * is streamed chunk by chunk to one lazily started worker, which assembles,
 * scans and parses it: the daemon's thread never copies, decodes or parses a
 * large body in one go, it only receives the finished value. Bodies queue on
 * the worker in arrival order; it stops after a quiet spell (giving back the
 * memory a large parse used) and restarts on demand.
 */
export class JsonBodyParser {
  private worker: Worker | undefined;
  /** bodies on the worker, streaming or waiting for their value */
  private readonly jobs = new Map<number, { resolve?: (v: unknown) => void; reject?: (e: Error) => void; assembler?: Assembler }>();
  private nextId = 0;
  private idle: NodeJS.Timeout | undefined;
  private readonly limits: ScanLimits;
  private readonly maxBytes: number;
  private readonly inlineMax: number;
  private readonly workerUrl: URL;
  /** bodies parsed on the worker */
  offloaded = 0;
  /** large bodies refused 503 because the large-body budget was taken (the shim spools them) */
  refusedBusy = 0;
  /** bytes of the large-body budget held now */
  private inFlight = 0;
  private readonly budget: number;

  constructor(
    o: JsonBodyParserOptions,
    private readonly framing: FramingErrors,
  ) {
    this.limits = { maxNodes: o.maxNodes, maxDepth: o.maxDepth };
    this.maxBytes = o.maxBytes;
    this.inlineMax = o.inlineMaxBytes ?? INLINE_PARSE_MAX_BYTES;
    this.budget = Math.max(o.largeBudgetBytes ?? LARGE_BODY_BUDGET_BYTES, o.maxBytes);
    this.workerUrl = o.workerUrl ?? new URL('./json-worker.js', import.meta.url);
  }

  /** Read a request body stream (fastify's framing checks and replies) and parse it. */
  read(payload: NodeJS.ReadableStream, contentLengthHeader: string | undefined): Promise<unknown> {
    const declared = contentLengthHeader === undefined ? NaN : Number(contentLengthHeader);
    if (declared > this.maxBytes) return Promise.reject(this.framing.tooLarge());
    return new Promise((resolve, reject) => {
      let received = 0;
      let chunks: Buffer[] = [];
      let job: Job | undefined;
      /** bytes of the large-body budget this body holds */
      let held = 0;
      const releaseHeld = () => {
        this.inFlight -= held;
        held = 0;
      };
      const detach = () => {
        payload.removeListener('data', onData);
        payload.removeListener('end', onEnd);
        payload.removeListener('error', onError);
      };
      const fail = (err: Error) => {
        detach();
        if (job) this.abort(job);
        releaseHeld();
        reject(err);
      };
      /** A large body holds `bytes` of the budget; false (refused `busy`, the rest drained unkept) when it cannot. */
      const reserve = (bytes: number): boolean => {
        const more = bytes - held;
        if (more <= 0) return true;
        if (this.inFlight + more > this.budget && this.inFlight > held) {
          this.refusedBusy++;
          fail(new BodyRefusal('busy'));
          payload.resume();
          return false;
        }
        this.inFlight += more;
        held += more;
        return true;
      };

      const onData = (chunk: Buffer | string) => {
        const c = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        received += c.length;
        if (received > this.maxBytes) return fail(this.framing.tooLarge());
        if (!job && received <= this.inlineMax && !(declared > this.inlineMax)) return void chunks.push(c);
        // a large body of unknown length holds what has arrived so far
        if (!reserve(Math.max(received, declared || 0))) return;
        // a large body: from here on every piece goes straight to the worker
        if (!job) {
          job = this.open();
          for (const held of chunks) this.send(job, held);
          chunks = [];
        }
        this.send(job, c);
      };
      const onEnd = () => {
        if (!Number.isNaN(declared) && received !== declared) return fail(this.framing.badLength());
        detach();
        if (job) {
          return void this.finish(job).then(
            (v) => (releaseHeld(), resolve(v)),
            (e: unknown) => (releaseHeld(), reject(e as Error)),
          );
        }
        releaseHeld();
        try {
          resolve(parseBounded(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received), this.limits));
        } catch (err) {
          reject(err);
        }
      };
      const onError = (err: Error & { statusCode?: number }) => {
        if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
        fail(err);
      };
      // a declared large body takes its share of the budget before a byte of it is kept
      if (declared > this.inlineMax && !reserve(declared)) return;
      payload.on('data', onData);
      payload.on('end', onEnd);
      payload.on('error', onError);
      payload.resume();
    });
  }

  /** Start a body on the worker. */
  private open(): Job {
    const worker = this.ensureWorker();
    if (this.idle) clearTimeout(this.idle);
    const id = ++this.nextId;
    this.jobs.set(id, {});
    this.offloaded++;
    return { id, worker };
  }

  /** One piece, copied into memory of its own and handed over (socket chunks share their backing store). */
  private send(job: Job, chunk: Buffer): void {
    if (this.worker !== job.worker) return; // that worker is gone; finish() refuses the body
    const bytes = new Uint8Array(chunk);
    job.worker.postMessage({ type: 'chunk', id: job.id, bytes } satisfies WorkerRequest, [bytes.buffer]);
  }

  private finish(job: Job): Promise<unknown> {
    const entry = this.jobs.get(job.id);
    if (this.worker !== job.worker || !entry) {
      this.jobs.delete(job.id);
      return Promise.reject(new BodyRefusal('parser-unavailable'));
    }
    return new Promise((resolve, reject) => {
      entry.resolve = resolve;
      entry.reject = reject;
      job.worker.postMessage({ type: 'end', id: job.id, limits: this.limits } satisfies WorkerRequest);
    });
  }

  private abort(job: Job): void {
    this.jobs.delete(job.id);
    if (this.worker === job.worker) job.worker.postMessage({ type: 'abort', id: job.id } satisfies WorkerRequest);
    this.armIdle();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(this.workerUrl);
    w.unref();
    w.on('message', (m: WorkerReply) => {
      const entry = this.jobs.get(m.id);
      if (m.ok) {
        if (!entry) return;
        (entry.assembler ??= new Assembler()).apply(m.parts);
        if (m.more) return void w.postMessage({ type: 'next', id: m.id } satisfies WorkerRequest);
        this.jobs.delete(m.id);
        const value = entry.assembler.value;
        if (m.depth !== undefined && typeof value === 'object' && value !== null) scannedDepth.set(value, m.depth);
        entry.resolve?.(value);
        return void this.armIdle();
      }
      this.jobs.delete(m.id);
      if (m.refusal) entry?.reject?.(new BodyRefusal(m.refusal));
      else entry?.reject?.(new SyntaxError('body is not valid JSON'));
      this.armIdle();
    });
    const gone = () => {
      if (this.worker !== w) return;
      this.worker = undefined;
      for (const entry of this.jobs.values()) entry.reject?.(new BodyRefusal('parser-unavailable'));
      this.jobs.clear();
    };
    w.on('error', gone);
    w.on('exit', gone);
    this.worker = w;
    return w;
  }

  /** With nothing on the worker, stop it after a quiet spell. */
  private armIdle(): void {
    if (this.jobs.size > 0 || !this.worker) return;
    const w = this.worker;
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (this.worker === w && this.jobs.size === 0) {
        this.worker = undefined;
        void w.terminate();
      }
    }, WORKER_IDLE_MS);
    this.idle.unref();
  }

  async close(): Promise<void> {
    if (this.idle) clearTimeout(this.idle);
    const w = this.worker;
    this.worker = undefined;
    for (const entry of this.jobs.values()) entry.reject?.(new BodyRefusal('parser-unavailable'));
    this.jobs.clear();
    if (w) await w.terminate();
  }
}
