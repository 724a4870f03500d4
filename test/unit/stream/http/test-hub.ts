/**
 * A small real hub and the subscription parsers for the HTTP binding tests,
 * until the stream core lands (`src/stream/stream-hub.ts`, `attr-match.ts`,
 * `resume-from.ts`): at integration only `testStream()` changes to build those.
 */
import { captureRank, type CaptureLevel } from '../../../../src/core/capture-levels.js';
import { downlevel } from '../../../../src/capture/downlevel.js';
import { comparePosition, dedupeKey, severityRank, isSeverity, type Position, type WireEvent } from '../../../../src/aep/wire.js';
import type {
  EventFilter,
  Ingress,
  IngestOutcome,
  StreamHubApi,
  SubscriberSink,
  SubscribeRefusal,
  Subscription,
  SubscriptionSpec,
} from '../../../../src/stream/hub-types.js';
import type { SubscriptionParsers } from '../../../../src/stream/http/deps.js';

const NOT_FILTERABLE = new Set(['time', 'seq', 'aep', 'traceparent', 'data']);

/** attr-match (AEP-0003 §6.1/§6.2), enough for these tests: equality, inclusion, type patterns, severity bounds. */
function compileFilter(json: unknown): { ok: true; filter: EventFilter } | { ok: false; detail: string } {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { ok: false, detail: 'a filter is an object' };
  const preds: EventFilter[] = [];
  for (const [k, p] of Object.entries(json)) {
    if (NOT_FILTERABLE.has(k) || !/^[a-z0-9]+$/.test(k)) return { ok: false, detail: `key ${k} is not filterable` };
    if (k === 'severity' && typeof p === 'object' && p !== null && !Array.isArray(p)) {
      const { gte, lte } = p as { gte?: unknown; lte?: unknown };
      if ((gte !== undefined && !isSeverity(gte)) || (lte !== undefined && !isSeverity(lte))) return { ok: false, detail: 'bad severity bound' };
      preds.push(
        (w) => (gte === undefined || severityRank(w.severity) >= severityRank(gte)) && (lte === undefined || severityRank(w.severity) <= severityRank(lte)),
      );
      continue;
    }
    const options = Array.isArray(p) ? p : [p];
    const value = (w: WireEvent): unknown => (k === 'severity' ? w.severity : k === 'capture' ? w.capture : k === 'epoch' ? w.epoch : w.event[k]);
    preds.push((w) => options.some((o) => (k === 'type' && typeof o === 'string' && o.endsWith('.*') ? w.type.startsWith(o.slice(0, -1)) : value(w) === o)));
  }
  return { ok: true, filter: (w) => preds.every((f) => f(w)) };
}

const isPosition = (p: unknown): p is Position =>
  typeof p === 'object' &&
  p !== null &&
  typeof (p as Position).session === 'string' &&
  Number.isInteger((p as Position).epoch) &&
  Number.isInteger((p as Position).seq);

export const testParsers: SubscriptionParsers = {
  compileFilter,
  parseFrom: (json) =>
    json === 'all'
      ? { ok: true, from: 'all' }
      : Array.isArray(json) && json.every(isPosition)
        ? { ok: true, from: json }
        : { ok: false, detail: 'from is a position array or "all"' },
  parseLastEventId: (s) => {
    const m = /^(.+):(\d+):(\d+)$/.exec(s);
    return m ? { session: m[1]!, epoch: Number(m[2]), seq: Number(m[3]) } : undefined;
  },
};

interface Sub {
  readonly spec: SubscriptionSpec;
  readonly sink: SubscriberSink;
}

/** A per-session ring of `buffer` events, admission dedupe, live fan-out of everything, ceilings applied. */
export class TestHub implements StreamHubApi {
  readonly replay: { readonly buffer: number; readonly all: true };
  private readonly sessions = new Map<string, { held: WireEvent[]; lastEvicted?: Position }>();
  private readonly keys = new Set<string>();
  readonly subs = new Set<Sub>();

  constructor(private readonly o: { buffer: number; subscriptions: number }) {
    this.replay = { buffer: o.buffer, all: true };
  }

  private line(w: WireEvent, ceiling: CaptureLevel | undefined): string {
    if (!ceiling || captureRank(ceiling) >= captureRank(w.capture)) return w.line;
    return JSON.stringify(downlevel(w.event as never, ceiling));
  }

  publish(events: readonly WireEvent[]): void {
    for (const w of events) {
      if (!this.keys.has(dedupeKey(w))) {
        this.keys.add(dedupeKey(w));
        const s = w.session ?? '';
        const ring = this.sessions.get(s) ?? { held: [] };
        this.sessions.set(s, ring);
        ring.held.push(w);
        if (ring.held.length > this.o.buffer) {
          const gone = ring.held.shift()!;
          if (gone.seq !== undefined) ring.lastEvicted = { session: s, epoch: gone.epoch, seq: gone.seq };
        }
      }
      for (const sub of this.subs) if (sub.spec.live !== false && sub.spec.filter(w)) sub.sink.deliver(w, this.line(w, sub.spec.ceiling));
    }
  }

  knows(w: Pick<WireEvent, 'source' | 'id'>): boolean {
    return this.keys.has(dedupeKey(w));
  }

  subscribe(spec: SubscriptionSpec, sink: SubscriberSink): Subscription | SubscribeRefusal {
    if (this.subs.size >= this.o.subscriptions) return { code: 'limit-exceeded', detail: `subscriptions: at most ${this.o.subscriptions}` };
    const sub = { spec, sink };
    const send = (w: WireEvent) => spec.filter(w) && sink.deliver(w, this.line(w, spec.ceiling));
    if (spec.from === 'all') for (const ring of this.sessions.values()) ring.held.forEach(send);
    else
      for (const p of spec.from ?? []) {
        const ring = this.sessions.get(p.session);
        if (!ring) continue;
        const first = ring.held.find((w) => w.seq !== undefined);
        if (ring.lastEvicted && comparePosition(ring.lastEvicted, p) > 0 && first) sink.exhausted(p.session, { epoch: first.epoch, seq: first.seq! });
        ring.held.filter((w) => w.seq !== undefined && comparePosition(w as Position, p) > 0).forEach(send);
      }
    sink.replayed();
    if (spec.live === false) return { close() {} };
    this.subs.add(sub);
    return { close: () => void this.subs.delete(sub) };
  }

  ownSessions(): readonly string[] {
    return [];
  }
  isOwnSession(): boolean {
    return false;
  }
  stats(): Record<string, number> {
    return { subscribers: this.subs.size };
  }
  close(reason: string): void {
    for (const s of [...this.subs]) s.sink.kick(reason);
    this.subs.clear();
  }
}

/** The bridge, as far as these tests need it: dedupe by the hub, then publish everything (duplicates included). */
export class TestIngress implements Ingress {
  refuse: string | undefined;
  readonly batches: WireEvent[][] = [];
  constructor(private readonly hub: StreamHubApi) {}
  async ingest(events: readonly WireEvent[]): Promise<IngestOutcome> {
    if (this.refuse) return { status: 'refused', reason: this.refuse };
    this.batches.push([...events]);
    const duplicates = events.filter((w) => this.hub.knows(w)).length;
    this.hub.publish(events);
    return { status: 'accepted', accepted: events.length - duplicates, duplicates };
  }
}
