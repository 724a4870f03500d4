import type { IncomingMessage } from 'node:http';
import type { EventFilter, IngestOutcome, Ingress, StreamHubApi, SubscriberSink, Subscription, SubscriptionSpec } from '../../../../src/stream/hub-types.js';
import type { FilterCompile, FromParse, StreamAccess, StreamAuthLike, StreamRefusal } from '../../../../src/stream/socket/deps.js';
import { wireOf, type Position, type WireEvent } from '../../../../src/aep/wire.js';
import { transportOf } from '../../../../src/transport/request-guard.js';

/**
 * Small in-test stand-ins for the seams the socket endpoint is written
 * against (A's hub and filter parsers, B's auth, D's ingress): just enough
 * behaviour to drive every endpoint path; the real ones replace them at
 * integration with no change to the tests' assertions.
 */

/** `session` (exact) and `type` (list, `x.*` prefix globs); any other key fails closed */
export const compileFilter: FilterCompile = (json) => {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { ok: false, detail: 'a filter is an object' };
  const f = json as Record<string, unknown>;
  for (const k of Object.keys(f)) if (k !== 'session' && k !== 'type') return { ok: false, detail: `unknown key ${k}` };
  const types = f['type'];
  if (types !== undefined && (!Array.isArray(types) || !types.every((t) => typeof t === 'string'))) return { ok: false, detail: 'type is a list' };
  const filter: EventFilter = (w) =>
    (f['session'] === undefined || w.session === f['session']) &&
    (types === undefined || types.some((t) => (t.endsWith('.*') ? w.type.startsWith(t.slice(0, -1)) : w.type === t)));
  return { ok: true, filter };
};

export const parseFrom: FromParse = (json) => {
  if (json === 'all') return { ok: true, from: 'all' };
  if (!Array.isArray(json)) return { ok: false, detail: 'from is an array or "all"' };
  const out: Position[] = [];
  for (const p of json as unknown[]) {
    const o = p as Record<string, unknown>;
    if (typeof o?.['session'] !== 'string' || !Number.isInteger(o['epoch']) || !Number.isInteger(o['seq'])) return { ok: false, detail: 'bad position' };
    out.push({ session: o['session'], epoch: o['epoch'] as number, seq: o['seq'] as number });
  }
  return { ok: true, from: out };
};

export class FakeHub implements StreamHubApi {
  readonly replay = { buffer: 100, all: true } as const;
  readonly held: WireEvent[] = [];
  readonly sinks = new Set<SubscriberSink>();
  own: string[] = [];
  /** sessions whose earliest held position is reported as evicted before it */
  evicted = new Set<string>();
  maxFrom = 16;

  publish(events: readonly WireEvent[]): void {
    for (const w of events) {
      this.held.push(w);
      for (const s of this.sinks) s.deliver(w, w.line);
    }
  }
  knows(): boolean {
    return false;
  }
  subscribe(spec: SubscriptionSpec, sink: SubscriberSink): Subscription | { code: 'limit-exceeded'; detail: string } {
    if (Array.isArray(spec.from) && spec.from.length > this.maxFrom) return { code: 'limit-exceeded', detail: `from: at most ${this.maxFrom} positions` };
    const wrapped: SubscriberSink = {
      deliver: (w, l) => {
        if (spec.filter(w)) sink.deliver(w, l);
      },
      exhausted: (s, e) => sink.exhausted(s, e),
      replayed: () => sink.replayed(),
      kick: (r) => sink.kick(r),
      pending: () => sink.pending(),
      drained: () => sink.drained(),
    };
    if (spec.from === 'all') for (const w of this.held) wrapped.deliver(w, w.line);
    else if (spec.from) {
      for (const p of spec.from) {
        const mine = this.held.filter((w) => w.session === p.session);
        if (this.evicted.has(p.session) && mine[0]) sink.exhausted(p.session, { epoch: mine[0].epoch, seq: mine[0].seq ?? 0 });
        for (const w of mine) if ((w.seq ?? -1) > p.seq) wrapped.deliver(w, w.line);
      }
    }
    this.sinks.add(wrapped);
    return { close: () => this.sinks.delete(wrapped) };
  }
  ownSessions(): readonly string[] {
    return this.own;
  }
  isOwnSession(session: string): boolean {
    return this.own.includes(session);
  }
  stats(): Record<string, number> {
    return { subscribers: this.sinks.size };
  }
  close(reason: string): void {
    for (const s of [...this.sinks]) s.kick(reason);
  }
}

export class FakeIngress implements Ingress {
  readonly taken: WireEvent[] = [];
  refuse = false;
  /** while set, every ingest waits for it (a slow history) */
  gate?: Promise<void>;
  constructor(private readonly hub: FakeHub) {}
  async ingest(events: readonly WireEvent[]): Promise<IngestOutcome> {
    await this.gate;
    if (this.refuse) return { status: 'refused', reason: 'disk full' };
    this.taken.push(...events);
    this.hub.publish(events);
    return { status: 'accepted', accepted: events.length, duplicates: 0 };
  }
}

/** B's rules in miniature: Unix socket = authenticated; TCP: Bearer or `?access_token=`; no token configured = watch */
export class FakeAuth implements StreamAuthLike {
  readonly transports: (string | undefined)[] = [];
  constructor(private readonly token?: string) {}
  check(req: IncomingMessage, _need: 'read' | 'write'): StreamAccess | StreamRefusal {
    const t = transportOf(req);
    this.transports.push(t);
    if (t === 'unix') return { kind: 'authenticated' };
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const given = bearer ?? new URL(req.url ?? '/', 'http://x').searchParams.get('access_token') ?? undefined;
    if (this.token === undefined)
      return given === undefined ? { kind: 'watch', browser: false } : { status: 401, body: { error: 'unauthorized', detail: 'no token is set' } };
    return given === this.token ? { kind: 'authenticated' } : { status: 401, body: { error: 'unauthorized', detail: 'bad token' } };
  }
}

let ids = 0;
/** A valid session-scoped event (its id unique per call). */
export function event(session: string, seq: number, type = 'session.started', extra: Record<string, unknown> = {}): Record<string, unknown> {
  const data = type === 'session.started' ? { client: { name: 'test' } } : type === 'session.ended' ? { reason: 'normal' } : undefined;
  return {
    aep: '0.1',
    id: `01JX9YB0AAAA${String(++ids).padStart(10, '0')}TEST`,
    type,
    time: '2026-07-03T10:14:00.000Z',
    source: `aep://peer/agent/peer-agent/session/${session}`,
    agent: 'peer-agent',
    session,
    seq,
    epoch: 0,
    ...(data ? { data } : {}),
    ...extra,
  };
}

/** A command (no `seq`: AEP-0004 §2.2). */
export function command(session: string, type = 'control.pause'): Record<string, unknown> {
  const data = type === 'control.attention.respond' ? { answer: { option: 'allow' } } : type === 'control.cancel' ? { scope: 'session' } : {};
  const subject = type === 'control.attention.respond' ? { subject: '01JX9YB4RQ000000000000GOLD' } : {};
  const id = `01JX9YB6CMD0${String(++ids).padStart(10, '0')}TEST`;
  return {
    aep: '0.1',
    id,
    type,
    ...subject,
    time: '2026-07-03T10:15:09.000Z',
    source: 'aep://sender/agent/sender',
    agent: 'sender',
    session,
    capture: 'metadata',
    data,
  };
}

export const wire = (ev: Record<string, unknown>): WireEvent => wireOf(ev, JSON.stringify(ev), 'ingest');
