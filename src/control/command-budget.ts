import { LRUCache } from 'lru-cache';

/** Commands one own session may have decided in a burst, and the rate its budget refills at. */
export const COMMAND_BURST = 50;
export const COMMAND_RATE_PER_S = 10;
/** The same across every own session. */
export const GLOBAL_COMMAND_BURST = 500;
export const GLOBAL_COMMAND_RATE_PER_S = 100;
/** Sessions whose budget is remembered; a forgotten one starts full again (bounded by the global budget). */
const MAX_BUDGETS = 10_000;

/** A token bucket: `burst` tokens, refilled at `perS` a second (by the caller's clock, ms). */
class Bucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly burst: number,
    private readonly perS: number,
    now: number,
  ) {
    this.tokens = burst;
    this.at = now;
  }

  has(now: number): boolean {
    if (now > this.at) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.perS) / 1000);
      this.at = now;
    }
    return this.tokens >= 1;
  }

  take(): void {
    this.tokens -= 1;
  }
}

/**
 * What a flood of commands may write: every command decided writes itself
 * and its ack into the session's history, so decisions are budgeted per own
 * session and across all of them. A command past either budget is not
 * decided in the history (the caller nacks it `busy` on the stream only).
 */
export class CommandBudget {
  private readonly sessions = new LRUCache<string, Bucket>({ max: MAX_BUDGETS });
  private global: Bucket | undefined;

  /** whether `session` may have one more command decided now (taking one token of each budget if so) */
  take(session: string, now: number): boolean {
    this.global ??= new Bucket(GLOBAL_COMMAND_BURST, GLOBAL_COMMAND_RATE_PER_S, now);
    let own = this.sessions.get(session);
    if (!own) {
      own = new Bucket(COMMAND_BURST, COMMAND_RATE_PER_S, now);
      this.sessions.set(session, own);
    }
    if (!own.has(now) || !this.global.has(now)) return false;
    own.take();
    this.global.take();
    return true;
  }
}
