import type WebSocket from 'ws';
import type { RawData } from 'ws';
import { loadWs } from '../util/lazy-modules.js';
import { FAMILIES } from '../aep/lifecycle.js';
import { CAPTURE_LEVELS, captureRank, type CaptureLevel } from '../core/capture-levels.js';
import type { Logger } from '../core/logger.js';
import { errorCode, HealthLatch, type Degradation } from '../core/health-latch.js';
import type { WireEvent } from '../aep/wire.js';
import { checkEnvelope, lineOf } from '../stream/envelope-check.js';
import { isCommandType, ownControl, type OwnControlPort } from '../stream/socket/frames.js';
import { Outbox, SentRing } from './outbox.js';

export interface RelayLinkOptions {
  /** AEP_RELAY_URL (ws:// or wss://; never logged: it may carry credentials) */
  readonly url: string;
  /** AEP_TOKEN, sent as `Authorization: Bearer` */
  readonly token?: string;
  /** events queued while the link is down (AEP_RELAY_OUTBOX) */
  readonly outbox: number;
  readonly instance: string;
  /** the capture ceiling of this daemon: the levels up to it are declared */
  readonly ceiling: CaptureLevel;
  /** ping interval; 3 intervals without a pong and the link is cut */
  readonly heartbeatMs: number;
  readonly log: Logger;
  /** how far before a cut sent events are resent after the reconnect (default 10 s) */
  readonly resendWindowMs?: number;
  /** how many sent events are kept for that (default 1000) */
  readonly resendMax?: number;
  readonly backoff?: { readonly minMs: number; readonly maxMs: number };
  readonly now?: () => number;
  /**
   * This daemon's control target: its `accepts` is declared in hello, and a
   * command the relay routes here (for an own session) goes to it. Absent:
   * `accepts: []`, commands counted and ignored.
   */
  readonly control?: OwnControlPort;
  /** whether a session is one of this daemon's own (a command for any other is ignored, counted) */
  readonly isOwnSession?: (session: string) => boolean;
}

/** bytes the socket may hold unsent before events queue in the outbox instead */
const HIGH_WATER = 1024 * 1024;
const FLUSH_POLL_MS = 20;

const textOf = (d: RawData): string => (Array.isArray(d) ? Buffer.concat(d) : Buffer.from(d as ArrayBuffer)).toString('utf8');

/** The categories this daemon emits (hello `emits`, AEP-0003 §4). */
export const HERMES_EMITS: readonly string[] = [...Object.keys(FAMILIES), 'assessment', 'x.hermes'];

/**
 * This daemon as an emitter towards a relay over the WebSocket binding
 * (AEP-0003 §3.5, §4): `hello` first, its own events only after the
 * relay's `hello`, a bounded outbox while down (§8.4), jittered exponential
 * reconnect, and a resend of the recently sent events after each reconnect
 * (delivery is at-least-once; the relay dedupes on `(source, id)`).
 * Commands (AEP-0004) the relay routes here go, validated, to the control
 * target (it acks them as Events of their session, which come back out here).
 */
export class RelayLink {
  private ws: WebSocket | undefined;
  private ready = false;
  private closed = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private pinger: NodeJS.Timeout | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private missedPongs = 0;
  /** when the current link was found cut (for the resend window); undefined before the first cut */
  private cutAt: number | undefined;
  private readonly outbox: Outbox;
  private readonly sent: SentRing;
  private readonly latch: HealthLatch;
  private readonly now: () => number;
  private readonly counts = { sent: 0, resent: 0, reconnects: 0, commands: 0, commands_ignored: 0, refused: 0 };

  constructor(private readonly o: RelayLinkOptions) {
    this.now = o.now ?? Date.now;
    this.outbox = new Outbox(o.outbox);
    this.sent = new SentRing(o.resendMax ?? 1000, o.resendWindowMs ?? 10_000);
    this.latch = new HealthLatch('relay', o.log, {
      failing: 'relay link dropping notice-or-above events: the outbox is full',
      recovered: 'relay link outbox drained',
    });
  }

  start(): void {
    if (!this.closed && !this.ws && !this.timer) this.connect();
  }

  /** this daemon's own events, after their durable write; never blocks, never throws */
  offer(events: readonly WireEvent[]): void {
    if (this.closed) return;
    for (const w of events) {
      // straight out while the socket keeps up and nothing waits ahead; else queued (bounded) in order
      if (this.writable() && this.outbox.size === 0) this.send(w, false);
      else if (this.outbox.push(w) === 'notice') this.latch.fail('outbox', `outbox full (${this.o.outbox}): notice+ dropped`);
    }
    if (this.outbox.size > 0 && this.ready) this.armFlush();
  }

  private writable(): boolean {
    return this.ready && this.ws?.readyState === 1 /* OPEN */ && this.ws.bufferedAmount < HIGH_WATER;
  }

  /** a slow relay: the outbox drains as the socket's buffer does (polled; ws has no drain event) */
  private armFlush(): void {
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = undefined;
      let w: WireEvent | undefined;
      while (this.writable() && (w = this.outbox.shift())) this.send(w, false);
      if (this.outbox.size === 0) this.latch.recover('outbox');
      else if (this.ready) this.armFlush();
    }, FLUSH_POLL_MS);
    this.flushTimer.unref();
  }

  stats(): {
    connected: boolean;
    sent: number;
    resent: number;
    queued: number;
    dropped_low: number;
    dropped_notice: number;
    reconnects: number;
    commands: number;
    commands_ignored: number;
  } {
    return {
      connected: this.ready,
      sent: this.counts.sent,
      resent: this.counts.resent,
      queued: this.outbox.size,
      dropped_low: this.outbox.droppedLow,
      dropped_notice: this.outbox.droppedNotice,
      reconnects: this.counts.reconnects,
      commands: this.counts.commands,
      commands_ignored: this.counts.commands_ignored,
    };
  }

  /** set while notice+ events were dropped and the outbox has not drained since: /healthz degraded */
  health(): Degradation | undefined {
    return this.latch.current();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.pinger);
    clearTimeout(this.flushTimer);
    this.latch.close();
    const ws = this.ws;
    this.ws = undefined;
    this.ready = false;
    if (!ws || ws.readyState === 3 /* CLOSED */) return;
    await new Promise<void>((resolve) => {
      ws.once('close', () => resolve());
      if (ws.readyState === 1 /* OPEN */) {
        ws.send(JSON.stringify({ type: 'closing', reason: 'daemon stopping', delivered: [] }));
        ws.close(1001, 'daemon stopping');
      } else ws.terminate();
      setTimeout(() => (ws.terminate(), resolve()), 2000).unref();
    });
  }

  private connect(): void {
    this.timer = undefined;
    const headers: Record<string, string> = this.o.token ? { authorization: `Bearer ${this.o.token}` } : {};
    const ws = new (loadWs().WebSocket)(this.o.url, { headers, handshakeTimeout: 10_000 });
    this.ws = ws;
    ws.on('open', () => ws.send(JSON.stringify(this.hello())));
    ws.on('message', (data, binary) => {
      if (!binary) this.onFrame(ws, textOf(data));
    });
    // whichever of the two comes first ends this attempt; the other finds it ended
    ws.on('error', (err) => this.lost(ws, errorCode(err)));
    ws.on('close', (code) => this.lost(ws, `closed ${code}`));
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      this.lost(ws, `http ${res.statusCode ?? 0}`);
      ws.terminate();
    });
  }

  private hello(): Record<string, unknown> {
    const capture = CAPTURE_LEVELS.filter((l) => captureRank(l) <= captureRank(this.o.ceiling));
    return {
      type: 'hello',
      versions: ['0.1'],
      role: 'emitter',
      identity: { agent: 'hermes', instance: this.o.instance },
      capabilities: { emits: HERMES_EMITS, capture, control: ownControl(this.o.control) },
    };
  }

  private onFrame(ws: WebSocket, text: string): void {
    if (ws !== this.ws) return;
    let f: Record<string, unknown>;
    try {
      const v: unknown = JSON.parse(text);
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return;
      f = v as Record<string, unknown>;
    } catch {
      return;
    }
    const type = typeof f.type === 'string' ? f.type : '';
    if (type.includes('.')) return this.onCommand(f, text);
    if (type === 'hello' && !this.ready) {
      const versions = Array.isArray(f.versions) ? f.versions : [];
      if (versions.length !== 1 || versions[0] !== '0.1') {
        this.o.log.warn('relay link: the relay chose no version this daemon speaks; retrying later');
        ws.terminate();
        return;
      }
      this.onReady(ws);
    } else if (type === 'error') {
      const code = typeof f.code === 'string' && /^[a-z-]{1,40}$/.test(f.code) ? f.code : 'unknown';
      this.o.log.warn('relay link: the relay sent an error', { code });
      if (!this.ready) {
        this.counts.refused++;
        ws.close(1000);
      }
    } else if (type === 'ping') ws.send(JSON.stringify({ type: 'pong', ...(f.t !== undefined ? { t: f.t } : {}) }));
    else if (type === 'pong') this.missedPongs = 0;
    else if (type === 'closing') ws.close(1000);
  }

  /** An Event from the relay: a command routed to this emitter (AEP-0004 §4), or something to ignore (counted). */
  private onCommand(f: Record<string, unknown>, text: string): void {
    const checked = this.o.control && isCommandType(String(f.type)) ? checkEnvelope(f, lineOf(text, f), 'ingest') : undefined;
    const w = checked?.ok ? checked.wire : undefined;
    if (!w || w.session === undefined || !(this.o.isOwnSession?.(w.session) ?? false)) {
      this.counts.commands_ignored++;
      return;
    }
    this.counts.commands++;
    this.o.control!.command(w);
  }

  private onReady(ws: WebSocket): void {
    this.ready = true;
    this.attempt = 0;
    this.missedPongs = 0;
    this.o.log.info('relay link connected', { reconnects: this.counts.reconnects });
    // first what the relay may have missed before the cut, then what queued while down
    if (this.cutAt !== undefined) for (const w of this.sent.since(this.cutAt)) this.send(w, true);
    this.armFlush();
    this.pinger = setInterval(() => {
      if (++this.missedPongs > 3) return ws.terminate();
      ws.send(JSON.stringify({ type: 'ping', t: this.now() }));
    }, this.o.heartbeatMs);
    this.pinger.unref();
  }

  private send(w: WireEvent, resend: boolean): void {
    this.ws!.send(w.line);
    this.sent.add(w, this.now());
    if (resend) this.counts.resent++;
    else this.counts.sent++;
  }

  /** this attempt is over: arm exactly one reconnect (jittered exponential backoff) */
  private lost(ws: WebSocket, reason: string): void {
    if (ws !== this.ws) return;
    this.ws = undefined;
    clearInterval(this.pinger);
    if (this.ready) {
      this.cutAt = this.now();
      this.o.log.warn('relay link lost', { reason });
    }
    this.ready = false;
    if (this.closed) return;
    const { minMs, maxMs } = this.o.backoff ?? { minMs: 250, maxMs: 30_000 };
    const cap = Math.min(maxMs, minMs * 2 ** this.attempt++);
    const delay = cap / 2 + Math.random() * (cap / 2);
    this.counts.reconnects++;
    this.timer = setTimeout(() => this.connect(), delay);
    this.timer.unref();
  }
}
