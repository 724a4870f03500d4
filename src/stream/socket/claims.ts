import type { Peer } from './hello.js';

/** An emitting connection as the claim registry sees it. */
export interface Claimant {
  readonly peer: Peer;
  /** send a frame's text to this connection as is */
  forward(text: string): void;
}

/** One roster entry (AEP-0003 §4.1 rule 4). */
export type RosterEntry = Readonly<Record<string, unknown>> & { readonly session: string };

/** Most sessions one connection can hold claims on; the least recently used claim is released past it. */
export const MAX_CLAIMS_PER_CONNECTION = 4096;

/**
 * The live (connection, session) claims this endpoint terminates: a
 * connection claims every session it sends events for, until it closes or
 * ends the session. The roster lists them (AEP-0003 §4.1) and commands are
 * routed by them (AEP-0004 §4).
 */
export class ClaimRegistry {
  private readonly bySession = new Map<string, Set<Claimant>>();
  private readonly byClaimant = new Map<Claimant, Map<string, true>>();

  claim(c: Claimant, session: string): void {
    let mine = this.byClaimant.get(c);
    if (!mine) this.byClaimant.set(c, (mine = new Map<string, true>()));
    if (mine.has(session)) {
      mine.delete(session); // re-insert: most recently used last
      mine.set(session, true);
      return;
    }
    mine.set(session, true);
    let set = this.bySession.get(session);
    if (!set) this.bySession.set(session, (set = new Set()));
    set.add(c);
    if (mine.size > MAX_CLAIMS_PER_CONNECTION) {
      const oldest = mine.keys().next().value as string;
      this.release(c, oldest);
    }
  }

  release(c: Claimant, session: string): void {
    this.byClaimant.get(c)?.delete(session);
    const set = this.bySession.get(session);
    if (!set) return;
    set.delete(c);
    if (set.size === 0) this.bySession.delete(session);
  }

  /** the connection went away: every claim it held ends */
  drop(c: Claimant): void {
    const mine = this.byClaimant.get(c);
    if (!mine) return;
    for (const s of [...mine.keys()]) this.release(c, s);
    this.byClaimant.delete(c);
  }

  claimants(session: string): readonly Claimant[] {
    return [...(this.bySession.get(session) ?? [])];
  }

  /** one entry per live claim, declarations relayed as declared (never merged, never inferred) */
  entries(): RosterEntry[] {
    const out: RosterEntry[] = [];
    for (const [c, sessions] of this.byClaimant) {
      for (const session of sessions.keys()) {
        out.push({
          session,
          ...(c.peer.agent !== undefined ? { agent: c.peer.agent } : {}),
          ...(c.peer.instance !== undefined ? { instance: c.peer.instance } : {}),
          ...(c.peer.control !== undefined ? { control: c.peer.control } : {}),
          ...(c.peer.emits !== undefined ? { emits: c.peer.emits } : {}),
        });
      }
    }
    return out;
  }

  get size(): number {
    let n = 0;
    for (const s of this.byClaimant.values()) n += s.size;
    return n;
  }
}
