/**
 * Deliver one command and wait for its acknowledgement (AEP-0004 §2, §3):
 * connect, subscribe to the target session's acks and attention outcomes
 * live BEFORE the command goes out (so the ack cannot slip past), send it,
 * then wait up to the collector's ack window plus a grace for the
 * `cause`-matched ack or refusal. A connection dropped before the ack is
 * tried once more with the very same bytes (same `id`: the target dedupes
 * and re-emits its recorded ack, §2.3, §3), reconnecting for a few seconds
 * while nothing answers (a daemon restarting). For an answer, once accepted,
 * the card's outcome is awaited as long again, best effort.
 */
import { classify, type Ack, type Outcome } from './ack.js';
import type { CommandEvent } from './command-event.js';
import { LinkError, openLink, type Link, type LinkFailure, type LinkOptions } from './socket-link.js';
import type { StreamTarget } from '../tail/sse-client.js';

/** The event types a command's subscription carries: its ack, and an answered card's outcome. */
export const ACK_TYPES = ['control.accepted', 'control.rejected', 'attention.answered', 'attention.resolved', 'attention.timeout'] as const;

/** Added to the ack window before silence counts as no ack (transit, the daemon's own queue). */
export const GRACE_MS = 2_000;

export interface SendOptions {
  readonly target: StreamTarget;
  readonly command: CommandEvent;
  /** an answer's card: its outcome is awaited after the ack */
  readonly card?: string;
  readonly link: LinkOptions;
  readonly signal?: AbortSignal;
  /** tests: a shorter grace */
  readonly graceMs?: number;
  /** deliveries before giving up on a dropping connection (default 2: the first and one retry) */
  readonly attempts?: number;
  /** how long a retry keeps trying to reconnect (a daemon restarting) */
  readonly reconnectMs?: number;
}

export type SendResult =
  | { readonly kind: 'ack'; readonly ack: Ack; readonly outcome?: Outcome; readonly deliveries: number }
  | { readonly kind: 'no-ack'; readonly waitedMs: number; readonly deliveries: number }
  | { readonly kind: 'failed'; readonly failure: LinkFailure; readonly deliveries: number }
  | { readonly kind: 'aborted' };

/** A retry reconnects for this long (a daemon restart takes about a second). */
export const RECONNECT_MS = 5_000;

const pause = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

/**
 * Open a link: once for the first delivery; for a retry, again and again
 * (backing off) while nothing answers, until `until` (the daemon may be
 * restarting). Any other failure ends it at once.
 */
async function connect(o: SendOptions, until: number | undefined): Promise<{ link: Link } | { failure: LinkFailure } | { aborted: true }> {
  for (let delay = 100; ; delay = Math.min(delay * 2, 1_000)) {
    try {
      return { link: await openLink(o.target, o.link) };
    } catch (err) {
      if (!(err instanceof LinkError)) throw err;
      if (until === undefined || err.failure.kind !== 'unreachable' || Date.now() + delay > until) return { failure: err.failure };
    }
    await pause(delay, o.signal);
    if (o.signal?.aborted) return { aborted: true };
  }
}

type Waited<T> = { readonly got: T } | { readonly dropped: true } | { readonly timeout: true } | { readonly aborted: true };

/** Wait for `probe()` to hold, re-checked on every frame; or the connection to close, the deadline, the signal. */
function waitFor<T>(link: Link, frames: EventTarget, probe: () => T | undefined, ms: number, signal: AbortSignal | undefined): Promise<Waited<T>> {
  return new Promise((resolve) => {
    const now = probe();
    if (now !== undefined) return resolve({ got: now });
    let done = false;
    const finish = (w: Waited<T>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      frames.removeEventListener('frame', onFrame);
      signal?.removeEventListener('abort', onAbort);
      resolve(w);
    };
    const onFrame = () => {
      const v = probe();
      if (v !== undefined) finish({ got: v });
    };
    const onAbort = () => finish({ aborted: true });
    const timer = setTimeout(() => finish({ timeout: true }), ms);
    frames.addEventListener('frame', onFrame);
    signal?.addEventListener('abort', onAbort, { once: true });
    void link.closed.then(() => finish({ dropped: true }));
  });
}

export async function sendCommand(o: SendOptions): Promise<SendResult> {
  const attempts = o.attempts ?? 2;
  const grace = o.graceMs ?? GRACE_MS;
  const pending = { commandId: o.command.id, ...(o.card !== undefined ? { card: o.card } : {}) };
  let ack: Ack | undefined;
  let outcome: Outcome | undefined;
  let deliveries = 0;
  for (let attempt = 1; ; attempt++) {
    if (o.signal?.aborted) return { kind: 'aborted' };
    const opened = await connect(o, attempt === 1 ? undefined : Date.now() + (o.reconnectMs ?? RECONNECT_MS));
    if ('aborted' in opened) return { kind: 'aborted' };
    if ('failure' in opened) return { kind: 'failed', failure: opened.failure, deliveries };
    const link = opened.link;
    const frames = new EventTarget();
    link.onFrame((text) => {
      const v = classify(text, pending);
      if (v === undefined) return;
      if ('ack' in v) ack ??= v.ack;
      else outcome ??= v.outcome;
      frames.dispatchEvent(new Event('frame'));
    });
    try {
      try {
        await link.subscribe('acks', { filter: { session: o.command.session, type: [...ACK_TYPES] } });
      } catch (err) {
        if (!(err instanceof LinkError)) throw err;
        if (err.failure.kind === 'dropped' && attempt < attempts) continue;
        return { kind: 'failed', failure: err.failure, deliveries };
      }
      link.send(o.command.line);
      deliveries += 1;
      const windowMs = link.ackWindowMs + grace;
      const got = await waitFor(link, frames, () => ack, windowMs, o.signal);
      if ('aborted' in got) return { kind: 'aborted' };
      if ('dropped' in got) {
        if (attempt < attempts) continue;
        return { kind: 'failed', failure: { kind: 'dropped' }, deliveries };
      }
      if ('timeout' in got) return { kind: 'no-ack', waitedMs: windowMs, deliveries };
      if (o.card !== undefined && got.got.kind === 'accepted' && outcome === undefined) {
        await waitFor(link, frames, () => outcome, windowMs, o.signal);
      }
      return { kind: 'ack', ack: got.got, ...(outcome !== undefined ? { outcome } : {}), deliveries };
    } finally {
      link.close();
    }
  }
}
