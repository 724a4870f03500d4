import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { safeFileName } from '../history/index.js';
import { SerialQueue } from '../util/serial-queue.js';
import { appendPrivate } from '../util/private-path.js';

const MAX_PENDING = 1_000;
const MAX_PENDING_BYTES = 256 * 1024 * 1024;

/**
 * The opt-in recording switch (`AEP_RECORD_DIR`): every valid envelope Hermes
 * sent is appended verbatim, one JSON line, to `{dir}/{session}.jsonl`, so a
 * real session can become a fixture. Raw envelopes ARE content (prompts,
 * commands, results): this is off by default, the files are 0600, and the
 * daemon logs a warning when it is on. Bounded like every other queue.
 */
export class EnvelopeRecorder {
  recorded = 0;
  dropped = 0;
  private readonly queue = new SerialQueue({ maxTasks: MAX_PENDING, maxBytes: MAX_PENDING_BYTES, onError: () => this.dropped++ });

  constructor(private readonly dir: string) {}

  record(raw: unknown, session: string | null | undefined): void {
    const file = path.join(this.dir, `${safeFileName(session || 'no-session')}.jsonl`);
    const line = `${JSON.stringify(raw)}\n`;
    const queued = this.queue.add(async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await appendPrivate(file, line);
      this.recorded++;
    }, line.length);
    if (!queued) this.dropped++;
  }

  flush(): Promise<void> {
    return this.queue.onIdle();
  }
}
