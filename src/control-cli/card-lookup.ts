/**
 * Find a card (an `attention.requested` event, by its id) among the events
 * the daemon holds, to learn its session and whether it can be answered
 * from here. The lookup is a replay-only read of `GET /stream`
 * (`from=all&live=0`, filtered on `type` and `id`, AEP-0003 §3.3, §5, §6):
 * the daemon ends that stream once the replay is done, so "not found" is
 * a fact, not a timeout. (The WebSocket `subscribe` has no end-of-replay
 * signal in AEP 0.1.)
 */
import { followStream, type StreamEnd, type StreamTarget } from '../tail/sse-client.js';

export interface Card {
  readonly id: string;
  readonly session: string;
  /** `data.respond_via` as declared; absent when the card declares none */
  readonly respondVia?: readonly string[];
  /** the option ids it offers; absent when it lists none */
  readonly options?: readonly string[];
  readonly expiresAt?: string;
}

export type Lookup = { readonly kind: 'found'; readonly card: Card } | { readonly kind: 'missing' } | Exclude<StreamEnd, { kind: 'ended' }>;

type Obj = Readonly<Record<string, unknown>>;
const rec = (v: unknown): Obj | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined);
const strings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);

/** The card in one event line, when it is the `attention.requested` with that id. */
export function cardOf(line: string, id: string): Card | undefined {
  let ev: Obj | undefined;
  try {
    ev = rec(JSON.parse(line));
  } catch {
    return undefined;
  }
  if (ev?.['type'] !== 'attention.requested' || ev['id'] !== id || typeof ev['session'] !== 'string' || ev['session'] === '') return undefined;
  const data = rec(ev['data']) ?? {};
  const respondVia = strings(data['respond_via']);
  const options = Array.isArray(data['options']) ? strings(data['options'].map((o) => rec(o)?.['id'])) : undefined;
  const expiresAt = typeof data['expires_at'] === 'string' ? data['expires_at'] : undefined;
  return {
    id,
    session: ev['session'],
    ...(respondVia !== undefined ? { respondVia } : {}),
    ...(options !== undefined ? { options } : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
  };
}

export async function findCard(target: StreamTarget, id: string, signal: AbortSignal, idleMs = 10_000): Promise<Lookup> {
  let card: Card | undefined;
  const end = await followStream({
    target,
    query: () => ({ filter: JSON.stringify({ type: 'attention.requested', id }), from: 'all', live: false }),
    follow: false,
    signal,
    idleMs,
    handlers: {
      message: (m) => void (card ??= cardOf(m.data, id)),
      comment: () => undefined,
      state: () => undefined,
    },
  });
  if (card !== undefined) return { kind: 'found', card };
  return end.kind === 'ended' ? { kind: 'missing' } : end;
}
