import type { KeyedEvent, MappedHook } from '../aep/mapped.js';
import type { ModelCallPayload } from '../aep/payloads.js';
import { X_HERMES } from '../aep/lifecycle.js';

/** Streams timed at once, at most: a stream whose model call never comes is forgotten oldest first. */
export const MAX_OPEN_STREAMS = 1024;

interface Timing {
  readonly startMs: number;
  firstMs?: number;
}

/**
 * First-token time of a streamed model call: from its stream's start to its
 * first text chunk (or to its end when no text came), as the daemon received
 * those hooks (they carry no time of their own), joined to the call's
 * `x.hermes.model.call` by (session, turn, call index) and carried on it as
 * `first_token_ms`. A stream whose text arrives after its call's event (the
 * vendor delivers stream hooks from worker threads) leaves that call without
 * one; nothing is guessed. The one stateful step between the mapping and
 * identity; it reads the hook's facts and keys, never its name.
 */
export class FirstTokenStep {
  private readonly open = new Map<string, Timing>();

  apply(hook: MappedHook, nowMs: number): MappedHook {
    const mark = hook.facts.stream();
    const session = hook.keys.session ?? '';
    if (mark) {
      const key = keyOf(session, mark.run, mark.call);
      if (mark.phase === 'start') this.put(key, { startMs: nowMs });
      else {
        const t = this.open.get(key);
        if (t && t.firstMs === undefined) t.firstMs = nowMs;
      }
      return hook;
    }
    const run = hook.keys.run;
    if (run === undefined || !hook.events.some((e) => e.type === X_HERMES.modelCall)) return hook;
    return { ...hook, events: hook.events.map((e) => (e.type === X_HERMES.modelCall ? this.timed(e, session, run) : e)) };
  }

  /** How many streams are timed and waiting for their call. */
  get size(): number {
    return this.open.size;
  }

  private timed(e: KeyedEvent, session: string, run: string): KeyedEvent {
    const d = e.data as ModelCallPayload;
    // an auxiliary call streams outside the main loop's stream hooks
    if (d.aux_task !== undefined || d.api_call === undefined) return e;
    const key = keyOf(session, run, d.api_call);
    const t = this.open.get(key);
    if (!t) return e;
    this.open.delete(key);
    if (t.firstMs === undefined) return e;
    return { ...e, data: { ...d, first_token_ms: Math.max(0, Math.round(t.firstMs - t.startMs)) } } as KeyedEvent;
  }

  private put(key: string, t: Timing): void {
    this.open.delete(key);
    this.open.set(key, t);
    if (this.open.size > MAX_OPEN_STREAMS) this.open.delete(this.open.keys().next().value!);
  }
}

const keyOf = (session: string, run: string, call: number): string => `${session}\u0000${run}\u0000${call}`;
