import type { SubscriberSink } from '../../src/stream/hub-types.js';
import type { WireEvent } from '../../src/aep/wire.js';

/** A stream transport that never sends: every delivered byte stays pending, `drained()` never settles. */
export class StalledSink implements SubscriberSink {
  unsent = 0;
  delivered: WireEvent[] = [];
  kicked: string | undefined;
  replayDone = false;
  deliver(w: WireEvent, line: string): void {
    this.delivered.push(w);
    this.unsent += Buffer.byteLength(line);
  }
  exhausted(): void {}
  replayed(): void {
    this.replayDone = true;
  }
  kick(reason: string): void {
    this.kicked = reason;
  }
  pending(): number {
    return this.unsent;
  }
  drained(): Promise<void> {
    return new Promise(() => {});
  }
}
