import { isCaptureLevel } from '../../core/capture-levels.js';
import type { SubscriberSink, Subscription, SubscriptionSpec } from '../hub-types.js';
import type { WireEvent } from '../../aep/wire.js';
import type { SocketDeps } from './deps.js';
import { errorFrame, requestId, type Frame } from './frames.js';
import type { ErrorCode } from '../../core/errors.js';

/** The transport side of one connection, as its subscriptions use it. */
export interface SubscriberIo {
  send(text: string): void;
  pending(): number;
  drained(): Promise<void>;
  /** the hub gave up on a subscription: the whole connection closes with `closing` */
  kick(reason: string): void;
}

/** Sessions whose last delivered position one subscription remembers for `closing` (least recently delivered forgotten first). */
export const MAX_POSITIONS_PER_SUB = 1024;

export interface DeliveredPosition {
  readonly sub: string | number;
  readonly session: string;
  readonly epoch: number;
  readonly seq: number;
}

/** One `subscribe` on a connection: the hub's sink, held back until `subscribed` is on the wire. */
class SocketSink implements SubscriberSink {
  subscription?: Subscription;
  readonly positions = new Map<string, { epoch: number; seq: number }>();
  /** frames the hub produced before `subscribed` was sent (replay can start inside `hub.subscribe`) */
  private early: string[] | undefined = [];
  private earlyBytes = 0;
  closed = false;

  constructor(
    readonly id: string | number,
    private readonly io: SubscriberIo,
  ) {}

  deliver(w: WireEvent, line: string): void {
    if (this.closed) return;
    if (w.session !== undefined && w.seq !== undefined) {
      this.positions.delete(w.session);
      this.positions.set(w.session, { epoch: w.epoch, seq: w.seq });
      if (this.positions.size > MAX_POSITIONS_PER_SUB) this.positions.delete(this.positions.keys().next().value as string);
    }
    this.emit(line);
  }

  exhausted(session: string, earliest: { readonly epoch: number; readonly seq: number }): void {
    if (this.closed) return;
    this.emit(JSON.stringify({ type: 'replay-exhausted', sub: this.id, session, earliest: { epoch: earliest.epoch, seq: earliest.seq } }));
  }

  replayed(): void {}

  kick(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.io.kick(reason);
  }

  pending(): number {
    return this.io.pending() + this.earlyBytes;
  }

  drained(): Promise<void> {
    return this.io.drained();
  }

  /** `subscribed` is sent: what the hub already produced follows it, in order */
  release(): void {
    const held = this.early ?? [];
    this.early = undefined;
    this.earlyBytes = 0;
    for (const t of held) this.io.send(t);
  }

  close(): void {
    this.closed = true;
    this.early = undefined;
    this.subscription?.close();
  }

  private emit(text: string): void {
    if (this.early) {
      this.early.push(text);
      this.earlyBytes += Buffer.byteLength(text);
    } else this.io.send(text);
  }
}

/**
 * The subscriptions of one connection (AEP-0003 §6.5): many at once, each
 * answered `subscribed` or an in-band `error` from the closed set, never
 * disturbing the others; events go out as their lines, one per text frame.
 */
export class SubscriptionSet {
  private readonly subs = new Map<string | number, SocketSink>();

  constructor(
    private readonly deps: Pick<SocketDeps, 'hub' | 'compileFilter' | 'parseFrom'>,
    private readonly io: SubscriberIo,
  ) {}

  get size(): number {
    return this.subs.size;
  }

  subscribe(frame: Frame, mayConsume: boolean): void {
    const id = requestId(frame);
    const refuse = (code: ErrorCode, detail: string) => this.io.send(errorFrame(code, detail, id !== undefined ? { id } : {}));
    if (id === undefined) return refuse('invalid-filter', 'subscribe needs an id (string)');
    if (!mayConsume) return refuse('unauthorized', 'this connection declared the emitter role: subscribing needs consumer or both');
    if (this.subs.has(id)) return refuse('invalid-filter', 'a subscription with this id is open on this connection');
    const spec = this.spec(frame);
    if (!spec.ok) return refuse('invalid-filter', spec.detail);
    const sink = new SocketSink(id, this.io);
    const got = this.deps.hub.subscribe(spec.spec, sink);
    if ('code' in got) {
      sink.close();
      return refuse(got.code, got.detail);
    }
    sink.subscription = got;
    if (sink.closed) {
      got.close();
      return;
    }
    this.subs.set(id, sink);
    this.io.send(JSON.stringify({ type: 'subscribed', id }));
    sink.release();
  }

  unsubscribe(frame: Frame): void {
    const id = requestId(frame);
    if (id === undefined) return this.io.send(errorFrame('invalid-filter', 'unsubscribe needs an id'));
    const sink = this.subs.get(id);
    this.subs.delete(id);
    sink?.close();
    this.io.send(JSON.stringify({ type: 'unsubscribed', id }));
  }

  /** last delivered position per (subscription, session), for `closing` (AEP-0003 §3.5 item 4) */
  delivered(): DeliveredPosition[] {
    const out: DeliveredPosition[] = [];
    for (const s of this.subs.values()) for (const [session, p] of s.positions) out.push({ sub: s.id, session, epoch: p.epoch, seq: p.seq });
    return out;
  }

  closeAll(): void {
    for (const s of this.subs.values()) s.close();
    this.subs.clear();
  }

  private spec(frame: Frame): { ok: true; spec: SubscriptionSpec } | { ok: false; detail: string } {
    const filter = this.deps.compileFilter(frame['filter'] === undefined ? {} : frame['filter']);
    if (!filter.ok) return { ok: false, detail: `filter: ${filter.detail}` };
    let from: SubscriptionSpec['from'];
    if (frame['from'] !== undefined) {
      const f = this.deps.parseFrom(frame['from']);
      if (!f.ok) return { ok: false, detail: `from: ${f.detail}` };
      from = f.from;
    }
    const capture = frame['capture'];
    if (capture !== undefined && !isCaptureLevel(capture)) return { ok: false, detail: 'capture must be none, metadata, redacted or full' };
    return { ok: true, spec: { filter: filter.filter, ...(capture !== undefined ? { ceiling: capture } : {}), ...(from !== undefined ? { from } : {}) } };
  }
}
