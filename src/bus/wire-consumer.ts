import type { AepEvent } from '../aep/event.js';
import { wireFromOwn, type WireEvent } from '../aep/wire.js';
import type { Consumer } from './consumer.js';

/**
 * An after-durable consumer that takes this daemon's own events in their wire
 * form (the stream hub, the relay link). Its owner closes what is behind it at
 * its own time: `flush` and `shutdown` have nothing to do.
 */
export function wireConsumer(name: string, offer: (ws: readonly WireEvent[]) => void): Consumer {
  return {
    name,
    consume: (events: readonly AepEvent[]) => offer(events.map(wireFromOwn)),
    flush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
}
