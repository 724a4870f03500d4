import type { ServerResponse } from 'node:http';
import type { SubscriberSink } from '../hub-types.js';
import type { WireEvent } from '../../aep/wire.js';

const SAFE = /^[^\r\n]*$/;

/** The SSE message of one event (AEP-0003 §3.3.2): `id:` only for a session-scoped event with a position. */
export function sseMessage(w: WireEvent, line: string): string {
  const id = w.session !== undefined && w.seq !== undefined && SAFE.test(w.session) ? `id: ${w.session}:${w.epoch}:${w.seq}\n` : '';
  const type = SAFE.test(w.type) ? `event: ${w.type}\n` : '';
  return `${type}${id}data: ${line}\n\n`;
}

/** Comment text is one line: anything after a line break is cut (reasons are fixed strings anyway). */
const comment = (text: string) => `: ${text.split(/[\r\n]/)[0]}\n\n`;

/**
 * One SSE response as a hub subscriber (AEP-0003 §3.3, §8.4): events as
 * messages, `replay-exhausted` and heartbeat comments, `: closing <reason>`
 * then the end of the response when the hub gives up on it.
 */
export class SseSink implements SubscriberSink {
  private ended = false;
  private finished = false;
  private heartbeat: NodeJS.Timeout | undefined;

  /** `begin` sends the response head: called before the first byte, never when the hub refuses the subscription. */
  constructor(
    private readonly res: ServerResponse,
    private readonly o: { readonly heartbeatMs: number; readonly live: boolean; readonly begin: () => void; readonly onEnd: () => void },
  ) {}

  /** The response is under way: heartbeats start, and the client going away ends the subscription. */
  open(): void {
    if (this.heartbeat || this.ended) return;
    this.o.begin();
    this.heartbeat = setInterval(() => this.write(comment('ping')), this.o.heartbeatMs);
    this.heartbeat.unref();
    this.res.once('close', () => this.finish());
  }

  private write(s: string): void {
    if (this.ended) return;
    this.open();
    this.res.write(s);
  }

  deliver(w: WireEvent, line: string): void {
    this.write(sseMessage(w, line));
  }

  exhausted(session: string, earliest: { readonly epoch: number; readonly seq: number }): void {
    if (SAFE.test(session)) this.write(comment(`replay-exhausted ${session} ${earliest.epoch}:${earliest.seq}`));
  }

  /** A replay-only stream ends here; a live one says `: replayed` (what follows is live: `hermes-aep tail` prints its recent context then). */
  replayed(): void {
    if (!this.o.live) this.end();
    else this.write(comment('replayed'));
  }

  kick(reason: string): void {
    this.write(comment(`closing ${reason}`));
    this.end();
  }

  pending(): number {
    return this.res.writableLength;
  }

  drained(): Promise<void> {
    if (this.ended || this.res.writableLength === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.res.removeListener('drain', done);
        this.res.removeListener('close', done);
        resolve();
      };
      this.res.once('drain', done);
      this.res.once('close', done);
    });
  }

  /** End the response (kick, replay-only done, daemon stopping). */
  end(): void {
    if (!this.ended) {
      this.open();
      this.ended = true;
      this.res.end();
    }
    this.finish();
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.ended = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.o.onEnd();
  }
}
