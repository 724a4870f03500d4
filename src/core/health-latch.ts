import type { LogFields, Logger } from './logger.js';

/** One sink that cannot do its job right now, as `/healthz` lists it. */
export interface Degradation {
  readonly sink: string;
  /** a code-level reason (`write failed: ENOSPC`), never content */
  readonly reason: string;
  /** ISO time of the first failure of this episode */
  readonly since: string;
}

export interface LatchMessages {
  /** the stderr line at the first failure */
  readonly failing: string;
  /** the stderr line at recovery */
  readonly recovered: string;
}

interface Episode {
  /** what is failing now, by kind, with its newest reason */
  readonly kinds: Map<string, string>;
  readonly since: number;
  logged: boolean;
}

/**
 * A sink's health, loud exactly twice per episode: one stderr line at the
 * first failure, one at recovery, whatever happens per event in between.
 * `kind` separates failure sources (`write`, `fsync`, `export`): a success
 * recovers only the kind it proves, and the episode ends when no kind is
 * failing. Flapping is rate-limited: after a failure line, further episodes
 * within `windowMs` are not logged as they happen; one still failing when the
 * window ends is logged then, with the count of the episodes not logged.
 */
export class HealthLatch {
  private episode: Episode | undefined;
  private lastFailLine = Number.NEGATIVE_INFINITY;
  private unlogged = 0;
  private timer: NodeJS.Timeout | undefined;
  /** episodes so far */
  episodes = 0;

  constructor(
    readonly sink: string,
    private readonly log: Logger,
    private readonly messages: LatchMessages,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  get failing(): boolean {
    return this.episode !== undefined;
  }

  /** whether `kind` is failing now */
  has(kind: string): boolean {
    return this.episode?.kinds.has(kind) ?? false;
  }

  fail(kind: string, reason: string): void {
    if (this.episode) {
      // the same episode: the newest reason is the one worth showing
      this.episode.kinds.set(kind, reason);
      return;
    }
    this.episodes++;
    const t = this.now();
    this.episode = { kinds: new Map([[kind, reason]]), since: t, logged: false };
    if (t - this.lastFailLine >= this.windowMs) this.logFailure();
    else {
      this.unlogged++;
      this.timer ??= setTimeout(
        () => {
          this.timer = undefined;
          if (this.episode && !this.episode.logged) this.logFailure();
        },
        this.lastFailLine + this.windowMs - t,
      );
      this.timer.unref();
    }
  }

  recover(kind: string, fields: LogFields = {}): void {
    const e = this.episode;
    if (!e || !e.kinds.delete(kind) || e.kinds.size > 0) return;
    this.episode = undefined;
    if (e.logged) this.log.info(this.messages.recovered, { sink: this.sink, after_ms: this.now() - e.since, ...fields });
  }

  /** the reason for `kind`, when it is failing */
  reason(kind: string): string | undefined {
    return this.episode?.kinds.get(kind);
  }

  current(): Degradation | undefined {
    const e = this.episode;
    return e ? { sink: this.sink, reason: [...e.kinds.values()].join('; '), since: new Date(e.since).toISOString() } : undefined;
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private logFailure(): void {
    const e = this.episode!;
    e.logged = true;
    this.lastFailLine = this.now();
    const flaps = this.unlogged;
    this.unlogged = 0;
    this.log.error(this.messages.failing, {
      sink: this.sink,
      reason: [...e.kinds.values()].join('; '),
      ...(flaps > 0 ? { episodes_not_logged: flaps } : {}),
    });
  }
}

/** The code of a filesystem or network error (`ENOSPC`), or its class name: never its message (which can quote paths or URLs). */
export function errorCode(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string' && /^[A-Z0-9_]{1,32}$/.test(code)) return code;
  const name = (err as Error | undefined)?.name;
  return typeof name === 'string' && /^[A-Za-z0-9_]{1,64}$/.test(name) ? name : 'unknown';
}
