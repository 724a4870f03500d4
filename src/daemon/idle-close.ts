import type { Logger } from '../core/logger.js';
import type { HookOutcome } from './pipeline.js';

/** Sessions ended per sweep at most: a start after a long stop may find thousands idle; the rest go at the next sweep. */
export const MAX_ENDED_PER_SWEEP = 500;
/**
 * How long a session whose card waits on a person (an approval, a clarify question, a held gate card) may stay
 * silent before it is ended all the same: Hermes's own prompts give up within minutes, so a card a day old
 * belongs to a Hermes that is gone.
 */
export const WAITING_MAX_MS = 24 * 3_600_000;

export interface IdleCloseOptions {
  /** AEP_SESSION_IDLE_S in ms; 0: never */
  readonly idleMs: number;
  /** the sessions silent since before `cutoff` (before `waitCutoff` while a card of theirs is pending), at most `max` */
  readonly idleSessions: (cutoff: number, waitCutoff: number, max: number) => string[];
  /** whether a hook of the session is held right now (the operator gate's card): a person is being asked */
  readonly held: (session: string) => boolean;
  /** ends one session (HookPipeline.endIdle); undefined: its log refuses events now */
  readonly end: (session: string) => Promise<HookOutcome> | undefined;
  readonly now?: () => number;
  readonly log?: Logger;
}

/**
 * The idle close: `hermes -z` and a killed Hermes never fire `on_session_finalize`, so a session Hermes has not
 * spoken in for `idleMs` is ended by the daemon. One sweep timer for every session (unref'd, never keeps the
 * process alive), each sweep one pass over the identity lanes and at most MAX_ENDED_PER_SWEEP ends. The clock is
 * injectable; the time a session was last heard from lives in its lane (snapshot and replay restore it), so a
 * restart ends the sessions that went quiet while it was down at its first sweep.
 */
export class IdleClose {
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  /** sessions ended for idleness by this process */
  ended = 0;
  /** idle sessions passed over because a hook of theirs was held (the gate waits on a person) */
  deferred = 0;
  /** idle sessions whose log refused events at the sweep (tried again at the next) */
  refused = 0;
  /** settles once the events of the latest sweep reached their logs (or were held there) */
  settled: Promise<void> = Promise.resolve();

  constructor(private readonly o: IdleCloseOptions) {
    this.now = o.now ?? Date.now;
  }

  /** every how many ms a sweep runs: a quarter of the idle time, between 1 s and 60 s */
  get everyMs(): number {
    return Math.max(1_000, Math.min(60_000, Math.floor(this.o.idleMs / 4)));
  }

  /** Sweep now (a start ends what went quiet while the daemon was down), then every `everyMs`. Off with idleMs 0. */
  start(): void {
    if (this.o.idleMs <= 0 || this.timer) return;
    this.sweep();
    this.timer = setInterval(() => this.sweep(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One pass: end the sessions silent for longer than the idle time. Returns how many it ended. */
  sweep(): number {
    if (this.o.idleMs <= 0) return 0;
    const now = this.now();
    const cutoff = now - this.o.idleMs;
    const waitCutoff = now - Math.max(this.o.idleMs, WAITING_MAX_MS);
    let n = 0;
    const outs: Promise<HookOutcome>[] = [];
    for (const session of this.o.idleSessions(cutoff, waitCutoff, MAX_ENDED_PER_SWEEP)) {
      if (this.o.held(session)) {
        this.deferred++;
        continue;
      }
      const out = this.o.end(session);
      if (!out) {
        this.refused++;
        continue;
      }
      outs.push(out);
      n++;
      this.ended++;
    }
    this.settled = Promise.all(outs).then(() => undefined);
    if (n > 0) this.o.log?.debug('ended idle sessions', { sessions: n });
    return n;
  }

  /** The `/healthz` block. */
  stats(): Record<string, number> {
    return { idle_s: Math.round(this.o.idleMs / 1000), ended: this.ended, deferred_held: this.deferred, refused: this.refused };
  }
}
