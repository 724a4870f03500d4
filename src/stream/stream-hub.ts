import type { Logger } from '../core/logger.js';
import type { StreamHubApi, SubscribeRefusal, SubscriberSink, Subscription, SubscriptionSpec } from './hub-types.js';
import { Subscriber, type SubscriberHost } from './hub/subscriber.js';
import { ReplayBuffer } from './replay-buffer.js';
import type { WireEvent } from '../aep/wire.js';

export interface StreamHubOptions {
  /** events held per session (AEP-0003 §5 `replay.buffer`) */
  readonly buffer: number;
  /** sessions held */
  readonly sessions: number;
  /** bytes of lines held */
  readonly maxBytes: number;
  /** bytes a subscriber may leave unsent (AEP-0003 §8.4) */
  readonly clientBytes: number;
  /** concurrent subscriptions */
  readonly subscriptions: number;
  readonly log?: Logger;
}

/**
 * The fan-out core (AEP-0003 §5, §6, §7, §8.4): publishes into the bounded
 * replay buffer (admission dedupe) and to every matching subscription
 * (duplicates included), replays on subscribe, and holds each subscriber to
 * its byte budget. Publishing never waits on a subscriber.
 */
export class StreamHub implements StreamHubApi {
  readonly replay: { readonly buffer: number; readonly all: true };
  private readonly buffer: ReplayBuffer;
  private readonly subs = new Set<Subscriber>();
  private readonly host: SubscriberHost;
  private droppedSlow = 0;
  private kickedCount = 0;
  private duplicates = 0;
  /** other emitters' sequenced events naming an own session: neither held nor delivered */
  private ownLaneRefused = 0;

  constructor(private readonly o: StreamHubOptions) {
    this.replay = Object.freeze({ buffer: o.buffer, all: true as const });
    this.buffer = new ReplayBuffer({ buffer: o.buffer, sessions: o.sessions, maxBytes: o.maxBytes });
    this.host = {
      dropped: () => void this.droppedSlow++,
      kicked: (reason) => {
        this.kickedCount++;
        o.log?.info('stream subscriber disconnected', { reason: reason.split(':')[0], subscribers: this.subs.size });
      },
      ended: (sub) => void this.subs.delete(sub),
    };
  }

  publish(events: readonly WireEvent[]): void {
    for (const w of events) {
      // the ingress refuses these (409); one still here (rebuilt from an older ingest log, a race with a session's start) never reaches a consumer
      if (this.buffer.collides(w)) {
        this.ownLaneRefused++;
        continue;
      }
      if (!this.buffer.admit(w)) this.duplicates++;
      for (const s of this.subs) s.offer(w);
    }
  }

  knows(w: Pick<WireEvent, 'source' | 'id'>): boolean {
    return this.buffer.knows(w);
  }

  subscribe(spec: SubscriptionSpec, sink: SubscriberSink): Subscription | SubscribeRefusal {
    if (this.subs.size >= this.o.subscriptions) return { code: 'limit-exceeded', detail: `subscriptions: at most ${this.o.subscriptions}` };
    if (Array.isArray(spec.from) && spec.from.length > this.o.sessions) return { code: 'limit-exceeded', detail: `from: at most ${this.o.sessions} positions` };
    const sub = new Subscriber({ filter: spec.filter, ceiling: spec.ceiling, live: spec.live !== false, clientBytes: this.o.clientBytes }, sink, this.host);
    // the replay set is fixed now: what is published from here on reaches the subscriber live (queued behind the replay)
    const steps = spec.from === undefined ? [] : this.buffer.plan(spec.from, spec.filter);
    this.subs.add(sub);
    queueMicrotask(() => void sub.start(steps).catch(() => sub.end()));
    return { close: () => sub.end() };
  }

  ownSessions(): readonly string[] {
    return this.buffer.ownSessions();
  }

  isOwnSession(session: string): boolean {
    return this.buffer.isOwnSession(session);
  }

  stats(): Record<string, number> {
    return {
      ...this.buffer.stats(),
      subscribers: this.subs.size,
      dropped_slow: this.droppedSlow,
      kicked: this.kickedCount,
      duplicates: this.duplicates,
      own_lane_refused: this.ownLaneRefused,
    };
  }

  close(reason: string): void {
    for (const s of [...this.subs]) s.kick(reason, false);
  }
}
