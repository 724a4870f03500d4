import { mkdir, unlink, type open } from 'node:fs/promises';
import path from 'node:path';
import { CREATE_NEW } from '../util/private-path.js';
import { writeFully } from './history-file.js';

const PROBE_BYTES = 64 * 1024;

/** Write and remove a 64 KiB file in `dir`; throws what the filesystem said. */
export async function probeWrite(dir: string, openFn: typeof open): Promise<void> {
  const file = path.join(dir, `.write-probe.${process.pid}`);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // a name left by a dead process of the same pid (or planted: never followed) goes first; the probe makes its own
    await unlink(file).catch(() => undefined);
    const h = await openFn(file, CREATE_NEW, 0o600);
    try {
      const { error } = await writeFully(h, Buffer.alloc(PROBE_BYTES, 0x0a));
      if (error !== undefined) throw error instanceof Error ? error : new Error('write probe failed', { cause: error });
    } finally {
      await h.close();
    }
  } finally {
    await unlink(file).catch(() => undefined);
  }
}

export interface WriteProbeHooks {
  /** whether writes still count as failing (the probe stops once they do not) */
  readonly failing: () => boolean;
  /** a probe write went through */
  readonly writable: () => void;
  /** a probe write failed */
  readonly stillFailing: (err: unknown) => void;
}

/**
 * While writes fail no hook is taken, so nothing would ever find out that
 * they work again: every `intervalMs` a probe writes and removes a 64 KiB file
 * in the history dir, and only the probe ends the episode (a small write that
 * happens to fit in a file's last page proves nothing about a full disk, and
 * would flap). One probe at a time.
 */
export class WriteProbe {
  private timer: NodeJS.Timeout | undefined;
  private probing = false;

  constructor(
    private readonly dir: string,
    private readonly openFn: typeof open,
    private readonly intervalMs: number,
    private readonly hooks: WriteProbeHooks,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async tick(): Promise<void> {
    if (this.probing) return;
    if (!this.hooks.failing()) return this.stop();
    this.probing = true;
    try {
      await probeWrite(this.dir, this.openFn);
      this.hooks.writable();
    } catch (err) {
      this.hooks.stillFailing(err);
    } finally {
      this.probing = false;
    }
  }
}
