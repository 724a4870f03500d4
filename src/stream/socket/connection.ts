import type { OwnSourceCheck } from '../own-source.js';
import type { WebSocket, RawData } from 'ws';
import { checkEnvelope, lineOf } from '../envelope-check.js';
import type { WireEvent } from '../../aep/wire.js';
import type { Claimant, ClaimRegistry } from './claims.js';
import { routeCommand } from './commands.js';
import type { SocketDeps, StreamAccess } from './deps.js';
import { capabilities, errorFrame, isCommandType, isEventType, ownControl, parseFrame, requestId, VERSIONS, type Frame } from './frames.js';
import { consumes, emits, negotiateHello, type Peer } from './hello.js';
import { SubscriptionSet } from './subscriptions.js';

export interface SocketCounters {
  events_in: number;
  events_invalid: number;
  commands_forwarded: number;
  commands_refused: number;
  kicked: number;
  heartbeat_timeouts: number;
  /** times an emitter's socket stopped being read while its events waited for the history */
  read_pauses: number;
}

export interface ConnectionContext {
  readonly deps: SocketDeps;
  readonly claims: ClaimRegistry;
  readonly counters: SocketCounters;
  /** whether a source names this daemon's own emitter (own-source.ts; absent: no own emitter to guard) */
  readonly ownSource?: OwnSourceCheck;
}

/** Heartbeat intervals a peer may stay silent before it is dropped (AEP-0003 §3.5 item 5). */
export const MISSED_LIMIT = 3;
/** Events of one connection waiting for the history: past this the socket stops being read until half have settled. */
export const MAX_INFLIGHT = 256;

/** WS close reasons are at most 123 bytes. */
const closeReason = (s: string) => (Buffer.byteLength(s) <= 120 ? s : s.slice(0, 60));

/**
 * One accepted `/socket` connection: the `hello` exchange first
 * (AEP-0003 §3.5, §4), then frames and Events as they come: subscriptions
 * (§6.5), the roster (§4.1), ping/pong, an emitter's Events ingested in
 * order, commands routed (AEP-0004 §4), `closing` before a deliberate close.
 */
export class Connection implements Claimant {
  private state: 'hello' | 'open' | 'closing' = 'hello';
  private peerInfo?: Peer;
  private missed = 0;
  private ingestChain: Promise<void> = Promise.resolve();
  private inflight = 0;
  private drainWaiters: (() => void)[] = [];
  private readonly subs: SubscriptionSet;
  /** settles once the WebSocket is closed (handshake done or dropped) */
  readonly whenClosed: Promise<void>;

  constructor(
    private readonly ws: WebSocket,
    readonly access: StreamAccess,
    private readonly ctx: ConnectionContext,
  ) {
    this.subs = new SubscriptionSet(ctx.deps, {
      send: (t) => this.send(t),
      pending: () => this.pending(),
      drained: () => this.drained(),
      kick: (reason) => {
        ctx.counters.kicked += 1;
        this.closeWith(reason, 1013);
      },
    });
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.on('pong', () => (this.missed = 0));
    this.whenClosed = new Promise((resolve) => ws.once('close', () => resolve()));
    ws.on('close', () => this.onClose());
    ws.on('error', () => undefined); // a broken peer ends in 'close'
  }

  get peer(): Peer {
    return this.peerInfo ?? { role: 'consumer', version: VERSIONS[0] };
  }

  get role(): Peer['role'] | undefined {
    return this.peerInfo?.role;
  }

  forward(text: string): void {
    this.send(text);
  }

  /** one heartbeat interval passed (AEP-0003 §3.5 item 5): ping, or drop a peer silent for too long */
  tick(): void {
    if (this.state === 'closing' || this.ws.isPaused) return; // not reading it (history backpressure): its silence is ours
    if (this.missed >= MISSED_LIMIT) {
      this.ctx.counters.heartbeat_timeouts += 1;
      this.ws.terminate();
      return;
    }
    this.missed += 1;
    if (this.state === 'open') this.send(JSON.stringify({ type: 'ping', t: Date.now() }));
  }

  /** a deliberate close: `closing` with the last delivered positions, then the close handshake */
  closeWith(reason: string, code: number): void {
    if (this.state === 'closing') return;
    const opened = this.state === 'open';
    this.state = 'closing';
    if (opened) this.send(JSON.stringify({ type: 'closing', reason, delivered: this.subs.delivered() }), true);
    this.subs.closeAll();
    this.ctx.claims.drop(this);
    this.ws.close(code, closeReason(reason));
  }

  terminate(): void {
    this.ws.terminate();
  }

  private send(text: string, evenClosing = false): void {
    if ((this.state === 'closing' && !evenClosing) || this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(text, () => this.settleDrain());
  }

  private pending(): number {
    return this.ws.bufferedAmount;
  }

  private drained(): Promise<void> {
    if (this.pending() === 0 || this.ws.readyState !== this.ws.OPEN) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private settleDrain(force = false): void {
    if (this.drainWaiters.length === 0 || (!force && this.pending() > 0)) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }

  private onClose(): void {
    this.state = 'closing';
    this.subs.closeAll();
    this.ctx.claims.drop(this);
    this.settleDrain(true);
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    this.missed = 0;
    if (this.state === 'closing') return;
    if (isBinary) {
      this.closeWith('binary frames are not used in AEP 0.1', 1003);
      return;
    }
    const text = (Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString('utf8');
    const got = parseFrame(text);
    if (this.state === 'hello') return this.onHello(got?.frame);
    if (!got) return this.send(errorFrame('invalid-frame'));
    const { frame, parsed } = got;
    if (isEventType(frame.type)) return this.onEvent(text, parsed);
    switch (frame.type) {
      case 'subscribe':
        return this.subs.subscribe(frame, consumes(this.peer.role));
      case 'unsubscribe':
        return this.subs.unsubscribe(frame);
      case 'roster':
        return this.onRoster(frame);
      case 'ping':
        return this.send(JSON.stringify({ type: 'pong', ...(frame['t'] !== undefined ? { t: frame['t'] } : {}) }));
      default:
        return; // pong, closing, and frame types this version does not know (AEP-0003 §2)
    }
  }

  private onHello(frame: Frame | undefined): void {
    if (frame?.type !== 'hello') {
      this.send(errorFrame('hello-required'));
      return this.closeWith('hello-required', 1008);
    }
    const got = negotiateHello(frame, this.access);
    if (!got.ok) {
      this.send(errorFrame(got.code, got.detail, {}, got.code === 'version-unsupported' ? { versions: [...VERSIONS] } : {}));
      return this.closeWith(got.code, 1008);
    }
    this.peerInfo = got.peer;
    this.state = 'open';
    const { identity } = this.ctx.deps;
    this.send(
      JSON.stringify({
        type: 'hello',
        versions: [got.peer.version],
        role: 'collector',
        identity: { agent: identity.agent, instance: identity.instance },
        capabilities: capabilities(this.ctx.deps.hub, this.ctx.deps.control),
      }),
    );
  }

  private onRoster(frame: Frame): void {
    const id = requestId(frame);
    if (id === undefined) return this.send(errorFrame('invalid-request', 'roster needs an id'));
    if (!consumes(this.peer.role)) return this.send(errorFrame('unauthorized', 'the roster is answered on consumer or both connections', { id }));
    const { hub, identity } = this.ctx.deps;
    const control = ownControl(this.ctx.deps.control);
    const own = hub.ownSessions().map((session) => ({ session, agent: identity.agent, instance: identity.instance, control }));
    this.send(JSON.stringify({ type: 'roster', id, entries: [...own, ...this.ctx.claims.entries()] }));
  }

  private onEvent(text: string, parsed: unknown): void {
    const { counters, deps } = this.ctx;
    const id = (parsed as Record<string, unknown>)['id'];
    const cause = typeof id === 'string' ? { cause: id } : {};
    // the control gate comes before anything else is looked at (AEP-0004 §4 item 1)
    if (isCommandType((parsed as { type: string }).type) && this.access.kind !== 'authenticated') {
      counters.commands_refused += 1;
      return this.send(errorFrame('unauthorized', 'commands need an authenticated connection (AEP-0004 §4)', cause));
    }
    const checked = checkEnvelope(parsed, lineOf(text, parsed), 'ingest');
    if (!checked.ok) {
      counters.events_invalid += 1;
      return this.send(errorFrame('invalid-event', checked.detail, cause));
    }
    const w = checked.wire;
    if (isCommandType(w.type)) {
      const ctx = {
        access: this.access,
        role: this.peer.role,
        hub: deps.hub,
        claims: this.ctx.claims,
        reply: (t: string) => this.send(t),
        persist: (c: WireEvent) => this.persist(c),
        ...(deps.control ? { own: deps.control } : {}),
      };
      const out = routeCommand(ctx, w, text);
      if (out.routed) counters.commands_forwarded += 1;
      else counters.commands_refused += 1;
      return;
    }
    if (!emits(this.peer.role)) return this.send(errorFrame('unauthorized', 'events are sent on an emitter or both connection', cause));
    if (this.ctx.ownSource?.(w.source)) {
      counters.events_invalid += 1;
      deps.refusals?.ownSource();
      return this.send(errorFrame('invalid-event', "source names this daemon's own emitter", cause));
    }
    counters.events_in += 1;
    if (w.session !== undefined) {
      if (w.type === 'session.ended') this.ctx.claims.release(this, w.session);
      else this.ctx.claims.claim(this, w.session);
    }
    this.persist(w);
  }

  /** ingest in arrival order on this connection; a refusal is answered, correlated to the event */
  private persist(w: WireEvent): void {
    this.inflight += 1;
    if (this.inflight > MAX_INFLIGHT && !this.ws.isPaused) {
      this.ctx.counters.read_pauses += 1;
      this.ws.pause();
    }
    this.ingestChain = this.ingestChain
      .then(async () => {
        const out = await this.ctx.deps.ingress.ingest([w]);
        if (out.status === 'conflict') this.send(errorFrame('invalid-event', out.reason, { cause: w.id }));
        else if (out.status === 'refused') this.send(errorFrame('unavailable', 'the history refused the event; retry later', { cause: w.id }));
      })
      .catch(() => this.send(errorFrame('unavailable', 'the event could not be taken; retry later', { cause: w.id })))
      .finally(() => {
        this.inflight -= 1;
        if (this.ws.isPaused && this.inflight <= MAX_INFLIGHT / 2) {
          this.missed = 0;
          this.ws.resume();
        }
      });
  }
}
