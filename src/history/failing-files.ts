import { errorCode } from '../core/health-latch.js';

/** session files tracked as failing, at most; past it a per-file failure counts as directory-wide */
export const MAX_FAILING_FILES = 1024;
/** the longest wait between two retries of one failing file */
const MAX_RETRY_MS = 30_000;

/**
 * Errors that concern the whole history directory (or the process): every
 * session is refused until the probe finds it writable again. Anything else
 * (EACCES, EISDIR, ELOOP, ENOTDIR, EFBIG…) is checked against the directory
 * probe: if the directory takes a write, the error is that one file's.
 */
export const DIRECTORY_WIDE = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'EMFILE', 'ENFILE', 'ENOMEM', 'ESHORTWRITE']);

interface Failing {
  readonly code: string;
  readonly since: number;
  retries: number;
  retryAt: number;
}

/**
 * Session files that cannot be written while the directory can: their
 * sessions are refused (503, so the transport spools them), the rest flow.
 * Each is retried after a backoff (the probe interval, doubling, at most
 * 30 s); bounded at MAX_FAILING_FILES.
 */
export class FailingFiles {
  private readonly files = new Map<string, Failing>();

  constructor(
    private readonly baseMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.files.size;
  }

  get full(): boolean {
    return this.files.size >= MAX_FAILING_FILES;
  }

  /** why `file` is refused, or undefined */
  reason(file: string): string | undefined {
    const f = this.files.get(file);
    return f ? `session file failing: ${f.code}` : undefined;
  }

  has(file: string): boolean {
    return this.files.has(file);
  }

  /** `file` failed (again): true when it was not failing before */
  fail(file: string, err: unknown): boolean {
    const f = this.files.get(file);
    const t = this.now();
    if (f) {
      f.retries++;
      f.retryAt = t + Math.min(MAX_RETRY_MS, this.baseMs * 2 ** Math.min(f.retries, 16));
      return false;
    }
    this.files.set(file, { code: errorCode(err), since: t, retries: 0, retryAt: t + this.baseMs });
    return true;
  }

  /** `file` took a write again: true when it was failing */
  recover(file: string): boolean {
    return this.files.delete(file);
  }

  /** whether `file` is failing and its next retry is not due yet */
  waiting(file: string): boolean {
    const f = this.files.get(file);
    return f !== undefined && f.retryAt > this.now();
  }

  /** failing files whose retry is due */
  due(): string[] {
    const t = this.now();
    return [...this.files].filter(([, f]) => f.retryAt <= t).map(([p]) => p);
  }

  clear(): void {
    this.files.clear();
  }
}
