/**
 * Read and follow the JSONL history (AEP-0003 §3.1: the file is its own
 * transport) when no daemon answers: every `*.jsonl` under the log root, all
 * agents. Files present at the start are read from their beginning or their
 * end (the caller says which, per file), oldest modified first; files that
 * appear later are read from their beginning. New bytes are found by
 * `fs.watch` on the root (recursive: the file it names is read, and only
 * that one) with a slow re-scan of every file as a safety net
 * (watch events can be lost, and a root that does not exist yet cannot be
 * watched): no busy loop. Only whole lines are handed out; a line still
 * being written waits for its newline. A file that shrinks was replaced
 * and is read again from its start.
 */
import { watch, type FSWatcher } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';

export interface HistoryOptions {
  readonly root: string;
  /** where to begin a file found at the start; `newer`: how many of the files found were modified after it */
  readonly startAt: (file: string, newer: number) => 'start' | 'end';
  readonly follow: boolean;
  readonly signal: AbortSignal;
  readonly onLine: (line: string, file: string) => void;
  /** the safety re-scan period (default 5 s) */
  readonly rescanMs?: number;
  /** called once the files found at the start are read and following has begun */
  readonly onReady?: () => void;
  /** a line longer than this is skipped (default 64 MiB) */
  readonly maxLine?: number;
}

interface Tracked {
  offset: number;
  rest: Buffer;
  /** bytes of an over-long line being skipped up to its newline */
  skipping: boolean;
}

const CHUNK = 256 * 1024;

/** Every `*.jsonl` under root, as absolute paths with their mtime; [] when root is missing. */
async function listFiles(root: string): Promise<{ file: string; mtimeMs: number; size: number }[]> {
  let names: string[];
  try {
    names = (await readdir(root, { recursive: true })).filter((n) => n.endsWith('.jsonl'));
  } catch {
    return [];
  }
  const out: { file: string; mtimeMs: number; size: number }[] = [];
  for (const n of names) {
    const file = path.join(root, n);
    try {
      const s = await stat(file);
      if (s.isFile()) out.push({ file, mtimeMs: s.mtimeMs, size: s.size });
    } catch {
      /* gone between readdir and stat */
    }
  }
  return out;
}

export class HistoryFollower {
  private readonly files = new Map<string, Tracked>();
  private chain: Promise<void> = Promise.resolve();
  private sweepQueued = false;
  private readonly fileQueued = new Set<string>();
  private watcher: FSWatcher | undefined;
  private readonly maxLine: number;

  constructor(private readonly o: HistoryOptions) {
    this.maxLine = o.maxLine ?? 64 * 1024 * 1024;
  }

  /** Read what is there; with `follow`, keep reading until the signal fires. */
  async run(): Promise<void> {
    const found = (await listFiles(this.o.root)).sort((a, b) => a.mtimeMs - b.mtimeMs);
    for (const [i, f] of found.entries()) {
      const from = this.o.startAt(f.file, found.length - 1 - i) === 'start' ? 0 : f.size;
      // begun at its end, a file is on a line boundary only if its last byte is a newline: else skip to the next one
      const skipping = from !== 0 && !(await this.endsWithNewline(f.file, f.size));
      this.files.set(f.file, { offset: from, rest: Buffer.alloc(0), skipping });
    }
    for (const f of found) await this.readNew(f.file);
    if (!this.o.follow || this.o.signal.aborted) return;
    const timer = setInterval(() => this.schedule(), this.o.rescanMs ?? 5_000);
    this.watchRoot();
    this.schedule(); // what was appended while the files were read the first time
    this.o.onReady?.();
    await new Promise<void>((resolve) => this.o.signal.addEventListener('abort', () => resolve(), { once: true }));
    clearInterval(timer);
    this.watcher?.close();
    await this.chain;
  }

  private watchRoot(): void {
    if (this.watcher !== undefined) return;
    try {
      // a named change reads that one file; an unnamed one sweeps them all
      this.watcher = watch(this.o.root, { recursive: true, persistent: true }, (_e, name) =>
        typeof name === 'string' && name !== '' ? this.scheduleFile(path.join(this.o.root, name)) : this.schedule(),
      );
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch {
      this.watcher = undefined; // the root does not exist yet: the re-scan retries
    }
  }

  /** one sweep at a time, at most one more queued behind it */
  private schedule(): void {
    if (this.sweepQueued || this.o.signal.aborted) return;
    this.sweepQueued = true;
    this.chain = this.chain.then(async () => {
      this.sweepQueued = false;
      if (this.o.signal.aborted) return;
      this.watchRoot();
      for (const f of (await listFiles(this.o.root)).sort((a, b) => a.mtimeMs - b.mtimeMs)) await this.catchUp(f.file, f.size);
    });
  }

  /** one file's news, queued once however many watch events name it meanwhile */
  private scheduleFile(file: string): void {
    if (!file.endsWith('.jsonl') || this.fileQueued.has(file) || this.o.signal.aborted) return;
    this.fileQueued.add(file);
    this.chain = this.chain.then(async () => {
      this.fileQueued.delete(file);
      const size = await stat(file).then(
        (s) => (s.isFile() ? s.size : undefined),
        () => undefined,
      );
      if (size !== undefined && !this.o.signal.aborted) await this.catchUp(file, size);
    });
  }

  /** read what `file` holds past what was read; a new file from its start, a shorter one again */
  private async catchUp(file: string, size: number): Promise<void> {
    const t = this.files.get(file);
    if (t !== undefined && size === t.offset) return;
    if (t === undefined || size < t.offset) this.files.set(file, { offset: 0, rest: Buffer.alloc(0), skipping: false });
    await this.readNew(file);
  }

  private async endsWithNewline(file: string, size: number): Promise<boolean> {
    if (size === 0) return true;
    const h = await open(file, 'r').catch(() => undefined);
    if (h === undefined) return true;
    try {
      const b = Buffer.alloc(1);
      await h.read(b, 0, 1, size - 1);
      return b[0] === 0x0a;
    } finally {
      await h.close();
    }
  }

  private async readNew(file: string): Promise<void> {
    const t = this.files.get(file);
    if (t === undefined) return;
    const h = await open(file, 'r').catch(() => undefined);
    if (h === undefined) return;
    try {
      const buf = Buffer.alloc(CHUNK);
      for (;;) {
        if (this.o.signal.aborted) return;
        const { bytesRead } = await h.read(buf, 0, CHUNK, t.offset);
        if (bytesRead === 0) return;
        t.offset += bytesRead;
        this.take(t, buf.subarray(0, bytesRead), file);
      }
    } finally {
      await h.close();
    }
  }

  private take(t: Tracked, bytes: Buffer, file: string): void {
    let from = 0;
    for (let nl = bytes.indexOf(0x0a, from); nl !== -1; nl = bytes.indexOf(0x0a, from)) {
      const part = bytes.subarray(from, nl);
      from = nl + 1;
      if (t.skipping) {
        t.skipping = false;
        t.rest = Buffer.alloc(0);
        continue;
      }
      const line = (t.rest.length > 0 ? Buffer.concat([t.rest, part]) : part).toString('utf8');
      t.rest = Buffer.alloc(0);
      if (line.trim() !== '') this.o.onLine(line, file);
    }
    if (t.skipping || from === bytes.length) return;
    const tail = bytes.subarray(from);
    if (t.rest.length + tail.length > this.maxLine) {
      t.rest = Buffer.alloc(0);
      t.skipping = true;
    } else {
      t.rest = Buffer.concat([t.rest, tail]);
    }
  }
}
