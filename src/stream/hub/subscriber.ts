import type { CaptureLevel } from '../../core/capture-levels.js';
import { ceilingLine } from '../ceiling.js';
import type { EventFilter, SubscriberSink } from '../hub-types.js';
import type { ReplayStep } from '../replay-buffer.js';
import { severityRank, type WireEvent } from '../../aep/wire.js';

const NOTICE = severityRank('notice');

/** What a subscriber reports to its hub: counted drops, a kick, its end. */
export interface SubscriberHost {
  dropped(): void;
  kicked(reason: string): void;
  ended(sub: Subscriber): void;
}

export interface SubscriberOptions {
  readonly filter: EventFilter;
  readonly ceiling: CaptureLevel | undefined;
  readonly live: boolean;
  readonly clientBytes: number;
}

interface Queued {
  readonly w: WireEvent;
  readonly line: string;
  readonly bytes: number;
}

/**
 * One subscription's delivery state. It starts replaying (paced by the
 * sink's drain); live events arriving meanwhile wait in a queue bounded by
 * `clientBytes` and follow the replay with no gap or reorder. Live, each
 * event goes straight to the sink under the AEP-0003 §8.4 rule: past half
 * of `clientBytes` unsent, `debug`/`info` are dropped (counted); a
 * `notice`-or-above event that would not fit kicks the subscriber.
 */
export class Subscriber {
  private state: 'replaying' | 'live' | 'closed' = 'replaying';
  private queue: Queued[] = [];
  private queued = 0;
  private wake: (() => void) | undefined;
  private readonly closedSignal: Promise<void>;

  constructor(
    private readonly o: SubscriberOptions,
    private readonly sink: SubscriberSink,
    private readonly host: SubscriberHost,
  ) {
    this.closedSignal = new Promise((resolve) => (this.wake = resolve));
  }

  get closed(): boolean {
    return this.state === 'closed';
  }

  /** Replay `steps`, then the live events queued meanwhile, then go live (or end, with `live: false`). */
  async start(steps: readonly ReplayStep[]): Promise<void> {
    for (const s of steps) {
      if ('exhausted' in s) {
        if (this.closed) return;
        this.sink.exhausted(s.exhausted.session, s.exhausted.earliest);
      } else if (!(await this.paced(ceilingLine(s.w, this.o.ceiling).line, s.w))) return;
    }
    if (this.closed) return;
    this.sink.replayed();
    if (!this.o.live) return this.end();
    while (this.queue.length > 0) {
      const q = this.queue;
      this.queue = [];
      for (const x of q) {
        this.queued -= x.bytes;
        if (!(await this.paced(x.line, x.w))) return;
      }
    }
    if (!this.closed) this.state = 'live';
  }

  /** Deliver once the sink has room (AEP-0003 §8.4 replay pacing); false when the subscriber closed meanwhile. */
  private async paced(line: string, w: WireEvent): Promise<boolean> {
    while (!this.closed && this.sink.pending() > this.o.clientBytes / 2) await Promise.race([this.sink.drained(), this.closedSignal]);
    if (this.closed) return false;
    this.sink.deliver(w, line);
    return true;
  }

  /** A published event (live fan-out, AEP-0003 §5). Never blocks. */
  offer(w: WireEvent): void {
    if (this.state === 'closed' || !this.o.filter(w)) return;
    if (this.state === 'replaying' && !this.o.live) return;
    const { line, bytes } = ceilingLine(w, this.o.ceiling);
    const low = severityRank(w.severity) < NOTICE;
    const half = this.o.clientBytes / 2;
    if (this.state === 'replaying') {
      if (low && this.queued + bytes > half) return this.host.dropped();
      if (this.queued + bytes > this.o.clientBytes) return this.kick('slow consumer: live events outgrew the buffer during replay');
      this.queue.push({ w, line, bytes });
      this.queued += bytes;
      return;
    }
    const pending = this.sink.pending();
    if (low && (pending > half || pending + bytes > this.o.clientBytes)) return this.host.dropped();
    if (pending + bytes > this.o.clientBytes) return this.kick('slow consumer: a notice-or-above event would exceed the client buffer');
    this.sink.deliver(w, line);
  }

  /** Give up on this subscriber; `slow` counts it as a backpressure disconnect (not a daemon stop). */
  kick(reason: string, slow = true): void {
    if (this.closed) return;
    this.end();
    if (slow) this.host.kicked(reason);
    this.sink.kick(reason);
  }

  /** Stop delivering; idempotent. */
  end(): void {
    if (this.closed) return;
    this.state = 'closed';
    this.queue = [];
    this.queued = 0;
    this.wake?.();
    this.host.ended(this);
  }
}
