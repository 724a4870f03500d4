import type { StreamHubApi, Subscription, SubscribeRefusal } from '../../src/stream/hub-types.js';
import { dedupeKey, type WireEvent } from '../../src/aep/wire.js';

/**
 * A small real StreamHubApi for the bridge's tests until the hub lands:
 * admission dedupe on (source, id), everything published kept in order as
 * "live". No subscriptions (the route and endpoint tests own those).
 */
export class MiniHub implements StreamHubApi {
  /** admitted events in order (what a `from: "all"` replay holds) */
  readonly held: WireEvent[] = [];
  /** every event published, duplicates included (what live fan-out forwards) */
  readonly live: WireEvent[] = [];
  private readonly keys = new Set<string>();
  private readonly ended = new Set<string>();
  readonly replay = { buffer: 1000, all: true } as const;

  publish(events: readonly WireEvent[]): void {
    for (const w of events) {
      this.live.push(w);
      const k = dedupeKey(w);
      if (this.keys.has(k)) continue;
      this.keys.add(k);
      this.held.push(w);
      if (w.origin === 'own' && w.type === 'session.ended' && w.session) this.ended.add(w.session);
    }
  }

  knows(w: Pick<WireEvent, 'source' | 'id'>): boolean {
    return this.keys.has(dedupeKey(w));
  }

  subscribe(): Subscription | SubscribeRefusal {
    return { code: 'limit-exceeded', detail: 'the test hub takes no subscriptions' };
  }

  ownSessions(): readonly string[] {
    const s = new Set<string>();
    for (const w of this.held) if (w.origin === 'own' && w.session && !this.ended.has(w.session)) s.add(w.session);
    return [...s];
  }

  isOwnSession(session: string): boolean {
    return this.ownSessions().includes(session);
  }

  stats(): Record<string, number> {
    return { events: this.held.length, published: this.live.length };
  }

  close(): void {}
}
