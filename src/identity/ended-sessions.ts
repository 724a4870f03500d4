import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { replaceDurably } from '../util/durable-file.js';
import { RecencySet } from '../util/recency-map.js';
import { SerialQueue } from '../util/serial-queue.js';
import { appendPrivate } from '../util/private-path.js';

const MAX_REMEMBERED = 100_000;
const MAX_PENDING_WRITES = 1_000;

/**
 * Sessions that already ended, remembered across restarts and beyond the
 * in-memory lanes: terminal exclusivity holds "across all epochs" (AEP-0002
 * §2.5), and Hermes finalizes a resumed session again in every process.
 * One id per line in `{stateDir}/ended-sessions`; the newest 100,000 are kept.
 */
export class EndedSessions {
  private readonly ids = new RecencySet<string>(MAX_REMEMBERED);
  private readonly file: string;
  dropped = 0;
  /** the appends, one at a time, bounded: past the bound an id is counted as dropped (it stays known in memory) */
  private readonly appends = new SerialQueue({ maxTasks: MAX_PENDING_WRITES, onError: () => this.dropped++ });

  constructor(stateDir: string) {
    this.file = path.join(stateDir, 'ended-sessions');
  }

  /** torn or foreign lines found at load (a crash mid-append): skipped, never fatal */
  skipped = 0;

  /**
   * Read the index, skipping any line that is not a JSON string, then rewrite
   * it compacted (the newest 100,000, one valid line each) so it never grows
   * without bound and a torn tail is healed.
   */
  async load(): Promise<void> {
    let text = '';
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    let lines = 0;
    for (const line of text.split('\n')) {
      if (!line) continue;
      lines++;
      try {
        const id: unknown = JSON.parse(line);
        if (typeof id === 'string') this.remember(id);
        else this.skipped++;
      } catch {
        this.skipped++;
      }
    }
    if (this.skipped > 0 || lines > this.ids.size) await this.compact();
  }

  private async compact(): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    // the compacted index replaces the old one whole (a crash keeps one or the other)
    await replaceDurably(this.file, (fh) => fh.writeFile([...this.ids].map((id) => `${JSON.stringify(id)}\n`).join('')));
  }

  has(session: string): boolean {
    return this.ids.has(session);
  }

  add(session: string): void {
    if (this.ids.has(session)) return;
    this.remember(session);
    const line = `${JSON.stringify(session)}\n`;
    const queued = this.appends.add(async () => {
      await mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
      await appendPrivate(this.file, line);
    });
    if (!queued) this.dropped++;
  }

  flush(): Promise<void> {
    return this.appends.onIdle();
  }

  private remember(session: string): void {
    this.ids.add(session);
  }
}
