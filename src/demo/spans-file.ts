/**
 * The demo trace's spans in the file exporter's output: one OTLP/JSON
 * ExportTraceServiceRequest per line (src/otel/file-span-exporter.ts), read
 * from where the file ended before the demo (the whole file when it was
 * rotated meanwhile). The turn's root span ends last, with the run, and the
 * exporter writes its batches in order: once the root span is there, the
 * trace is whole.
 */
import { openSync, readSync, closeSync, fstatSync } from 'node:fs';

export interface TraceSpans {
  readonly spans: number;
  /** the trace's root span (no parent) is among them */
  readonly root: boolean;
}

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Rec) : undefined);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The file's size now (0 when it does not exist). */
export function fileSize(file: string): number {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    return fstatSync(fd).size;
  } catch {
    return 0;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function readFrom(file: string, offset: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const start = size < offset ? 0 : offset;
    const buf = Buffer.alloc(size - start);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got).toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The spans of `traceId` in the lines written after `offset`. */
export function traceSpans(file: string, traceId: string, offset: number): TraceSpans {
  let spans = 0;
  let root = false;
  for (const line of readFrom(file, offset).split('\n')) {
    if (!line.includes(traceId)) continue;
    let request: unknown;
    try {
      request = JSON.parse(line);
    } catch {
      continue; // a line still being written
    }
    for (const rs of list(rec(request)?.['resourceSpans'])) {
      for (const ss of list(rec(rs)?.['scopeSpans'])) {
        for (const s of list(rec(ss)?.['spans'])) {
          const span = rec(s);
          if (span?.['traceId'] !== traceId) continue;
          spans += 1;
          if (typeof span['parentSpanId'] !== 'string' || span['parentSpanId'] === '') root = true;
        }
      }
    }
  }
  return { spans, root };
}

/** Poll until the trace's root span is in the file or `deadlineMs` passes; what was there last. */
export async function awaitTrace(file: string, traceId: string, offset: number, deadlineMs: number): Promise<TraceSpans> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const found = traceSpans(file, traceId, offset);
    if (found.root || Date.now() >= end) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
}
