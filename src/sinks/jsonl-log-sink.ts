import { mkdir, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { AepEvent } from '../aep/event.js';
import type { EventSink } from './sink.js';
import { safeFileName } from './safe-file-name.js';

const MAX_OPEN_FILES = 64;

interface OpenFile {
  readonly handle: FileHandle;
  /** writes to one file are chained so lines land in seq order */
  tail: Promise<void>;
}

/**
 * The durable stream (AEP-0003 §3.1): `{root}/hermes/{session}.jsonl`, one
 * event per line, each line ONE `write` on an O_APPEND descriptor so a tailing
 * reader never sees a torn event. Bounded: lines waiting beyond `queueMax` are
 * dropped and counted, never buffered without limit.
 */
export class JsonlLogSink implements EventSink {
  readonly name = 'log';
  private readonly dir: string;
  private readonly files = new Map<string, OpenFile>();
  private queued = 0;
  private queuedBytes = 0;
  private written = 0;
  private dropped = 0;
  private errors = 0;
  private closed = false;
  private lastError: string | undefined;

  constructor(
    root: string,
    private readonly queueMax: number,
    private readonly maxBytes = 256 * 1024 * 1024,
  ) {
    this.dir = path.resolve(root, 'hermes');
  }

  write(events: readonly AepEvent[]): void {
    for (const ev of events) {
      if (this.closed || this.queued >= this.queueMax) {
        this.dropped++;
        continue;
      }
      const line = `${JSON.stringify(ev)}\n`;
      // bounded in bytes too: one line at capture full can be a whole tool result
      if (this.queuedBytes + line.length > this.maxBytes && this.queued > 0) {
        this.dropped++;
        continue;
      }
      this.queued++;
      this.queuedBytes += line.length;
      void this.append(ev.session, line);
    }
  }

  private async append(session: string, line: string): Promise<void> {
    const file = path.join(this.dir, `${safeFileName(session)}.jsonl`);
    try {
      // Belt and braces: the encoded name can never leave the log dir.
      if (path.dirname(file) !== this.dir) throw new Error('log path escaped the log dir');
      const entry = await this.fileFor(file);
      const run = entry.tail.then(async () => {
        // one write per line; a short write (disk full) is finished rather than left torn
        const buf = Buffer.from(line, 'utf8');
        let off = 0;
        while (off < buf.length) {
          const { bytesWritten } = await entry.handle.write(buf, off, buf.length - off);
          if (bytesWritten <= 0) throw new Error('short write');
          off += bytesWritten;
        }
      });
      entry.tail = run.catch(() => undefined);
      await run;
      this.written++;
    } catch (err) {
      this.errors++;
      this.lastError = (err as NodeJS.ErrnoException).code ?? 'write failed';
    } finally {
      this.queued--;
      this.queuedBytes -= line.length;
    }
  }

  private readonly opening = new Map<string, Promise<OpenFile>>();
  private readonly closing = new Map<string, Promise<void>>();

  private async fileFor(file: string): Promise<OpenFile> {
    const open_ = this.files.get(file);
    if (open_) {
      this.files.delete(file);
      this.files.set(file, open_);
      return open_;
    }
    const pending = this.opening.get(file);
    if (pending) return pending;
    const p = (async () => {
      // a handle evicted with writes still queued finishes them first: lines stay in order
      await this.closing.get(file);
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      const handle = await open(file, 'a', 0o600);
      const entry: OpenFile = { handle, tail: Promise.resolve() };
      this.files.set(file, entry);
      this.evictHandles();
      return entry;
    })();
    this.opening.set(file, p);
    try {
      return await p;
    } finally {
      this.opening.delete(file);
    }
  }

  private evictHandles(): void {
    while (this.files.size > MAX_OPEN_FILES) {
      const [file, entry] = this.files.entries().next().value as [string, OpenFile];
      this.files.delete(file);
      const done = entry.tail.then(() => entry.handle.close()).catch(() => undefined);
      this.closing.set(file, done);
      void done.then(() => {
        if (this.closing.get(file) === done) this.closing.delete(file);
      });
    }
  }

  async flush(): Promise<void> {
    // Poll with a deadline: appends in flight settle on their own chains.
    const deadline = Date.now() + 10_000;
    while (this.queued > 0 && Date.now() < deadline) {
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all([...this.files.values()].map((f) => f.tail));
  }

  async shutdown(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    const files = [...this.files.values()];
    this.files.clear();
    await Promise.allSettled(files.map((f) => f.handle.close()));
  }

  stats(): Record<string, number | boolean | string> {
    return {
      written: this.written,
      queued: this.queued,
      queued_bytes: this.queuedBytes,
      dropped: this.dropped,
      errors: this.errors,
      ...(this.lastError ? { last_error: this.lastError } : {}),
    };
  }
}
