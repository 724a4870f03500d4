import type { AepEvent } from '../aep/event.js';
import type { BuilderState } from './builder-state.js';
import type { SpanBuilder } from './span-builder.js';

/** how long after `start()` a deferred state begins to load in the background */
const BACKGROUND_LOAD_DELAY_MS = 100;

interface PendingState {
  readonly read: () => BuilderState;
  readonly keep: (session: string) => boolean;
  readonly rebuild: () => void;
  state?: BuilderState;
  loaded: boolean;
  readonly tail: AepEvent[];
  at: number;
}

/**
 * A snapshot's span state, loaded LATER: nothing before the daemon listens
 * needs it (the identity stage does not depend on spans), so it is parsed,
 * checked and loaded in a few slices between other work, and at once
 * (`settle`) the moment anything needs it. Events restored meanwhile (the
 * log past the snapshot) queue behind it, in order. If the state does not
 * read back, `rebuild` replays the logs instead (they hold everything the
 * snapshot did).
 */
export class DeferredState {
  private pending: PendingState | undefined;
  /** the state could not be read back: the logs were replayed instead */
  rebuilt = false;

  /**
   * `replay` takes one restored event into the builder; `loaded` runs once
   * the state and its queued events are all in.
   */
  constructor(
    private readonly builder: SpanBuilder,
    private readonly replay: (ev: AepEvent) => void,
    private readonly loaded: () => void,
  ) {}

  defer(read: () => BuilderState, keep: (session: string) => boolean, rebuild: () => void): void {
    if (this.pending || this.builder.openUnits > 0) throw new Error('deferState needs a mirror that has restored nothing yet');
    this.pending = { read, keep, rebuild, loaded: false, tail: [], at: 0 };
  }

  /** Whether a state is still to load. */
  get loading(): boolean {
    return this.pending !== undefined;
  }

  /** Queue a restored event behind the state still to load; false when nothing is pending (replay it now). */
  queue(ev: AepEvent): boolean {
    if (!this.pending) return false;
    this.pending.tail.push(ev);
    return true;
  }

  /** Finish the load now. */
  settle(): void {
    while (this.step());
  }

  /** Load in slices of ~10 ms, starting a moment after the daemon listens (its first answers do not wait behind it). */
  inBackground(): void {
    const tick = () => {
      const t0 = performance.now();
      while (performance.now() - t0 < 10 && this.step());
      if (this.pending) setImmediate(tick);
    };
    setTimeout(tick, BACKGROUND_LOAD_DELAY_MS).unref();
  }

  /** One slice of the load; false when nothing is left. */
  private step(): boolean {
    const p = this.pending;
    if (!p) return false;
    if (!p.loaded && !p.state) {
      try {
        p.state = p.read();
      } catch {
        // the snapshot's state is unusable: the logs are the truth (the queued tail is in them too)
        this.pending = undefined;
        this.rebuilt = true;
        p.rebuild();
        this.loaded();
        return false;
      }
      return true;
    }
    if (!p.loaded) {
      this.builder.loadState(p.state!, p.keep);
      p.loaded = true;
      delete p.state;
      return true;
    }
    const end = Math.min(p.tail.length, p.at + 1000);
    for (; p.at < end; p.at++) this.replay(p.tail[p.at]!);
    if (p.at < p.tail.length) return true;
    this.pending = undefined;
    this.loaded();
    return false;
  }
}
