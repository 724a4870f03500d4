import { mkdir, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { SerialQueue } from '../util/serial-queue.js';
import { appendPrivate } from '../util/private-path.js';

/** `ExportResultCode` values, without loading @opentelemetry/core at start */
const SUCCESS = 0;
const FAILED = 1;

let serializer: Promise<typeof import('@opentelemetry/otlp-transformer')> | undefined;

/**
 * The embedded default when no collector is configured: each export batch is
 * appended as ONE line of OTLP/JSON (an ExportTraceServiceRequest), the format
 * the collector's `otlp_json_file` receiver replays. One rotation keeps it bounded.
 */
export class FileSpanExporter implements SpanExporter {
  /** one batch appended at a time, in export order (the batch processor bounds how many wait) */
  private readonly appends = new SerialQueue();
  private closed = false;

  constructor(
    readonly file: string,
    private readonly maxBytes = 100 * 1024 * 1024,
  ) {}

  export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
    if (this.closed) return done({ code: FAILED, error: new Error('exporter shut down') });
    this.appends.add(async () => {
      try {
        // loaded at the first export, not at start: it pulls in ~300 modules (100-200 ms of a daemon's start)
        const { JsonTraceSerializer } = await (serializer ??= import('@opentelemetry/otlp-transformer'));
        const body = Buffer.concat([Buffer.from(JsonTraceSerializer.serializeRequest(spans) ?? new Uint8Array()), Buffer.from('\n')]);
        await mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
        await this.rotateIfFull(body.length);
        // never through a symlink, never to a file another user owns or may write
        await appendPrivate(this.file, body);
      } catch (error) {
        return done({ code: FAILED, error: error instanceof Error ? error : new Error(String(error)) });
      }
      done({ code: SUCCESS });
    });
  }

  private async rotateIfFull(incoming: number): Promise<void> {
    try {
      if ((await stat(this.file)).size + incoming > this.maxBytes) await rename(this.file, `${this.file}.1`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }

  async forceFlush(): Promise<void> {
    await this.appends.onIdle();
  }

  async shutdown(): Promise<void> {
    await this.appends.onIdle();
    this.closed = true;
  }
}
