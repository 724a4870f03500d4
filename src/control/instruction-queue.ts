/** Instructions one session may hold undelivered, and the characters each may have (the steering design's caps). */
export const MAX_QUEUED = 20;
export const MAX_INSTRUCTION_CHARS = 4_000;
/** Sessions with queued instructions held at once; past it a new session's instruction is refused (`busy`). */
export const MAX_QUEUED_SESSIONS = 10_000;

/** One accepted instruction: the command that carried it, its text, and when it was accepted (ms since the epoch). */
export interface Instruction {
  readonly command: string;
  readonly text: string;
  readonly at: number;
}

export type Enqueued = { readonly ok: true } | { readonly ok: false; readonly reason: 'invalid' | 'busy'; readonly detail: string };

/**
 * Per-session FIFO of accepted instructions (steering): taken whole, in
 * arrival order, at the session's next eligible moment, or dropped whole at its
 * end. Bounded in every dimension; a refusal says which bound.
 */
export class InstructionQueue {
  private readonly bySession = new Map<string, Instruction[]>();

  /** queued instructions across sessions (for /healthz) */
  get size(): number {
    let n = 0;
    for (const q of this.bySession.values()) n += q.length;
    return n;
  }

  add(session: string, item: Instruction): Enqueued {
    if (item.text.trim() === '') return { ok: false, reason: 'invalid', detail: 'data.text is empty' };
    if (item.text.length > MAX_INSTRUCTION_CHARS)
      return { ok: false, reason: 'invalid', detail: `data.text is longer than ${MAX_INSTRUCTION_CHARS} characters` };
    const q = this.bySession.get(session);
    if (q && q.length >= MAX_QUEUED) return { ok: false, reason: 'invalid', detail: `the session already holds ${MAX_QUEUED} undelivered instructions` };
    if (!q && this.bySession.size >= MAX_QUEUED_SESSIONS) return { ok: false, reason: 'busy', detail: 'too many sessions hold undelivered instructions' };
    if (q) q.push(item);
    else this.bySession.set(session, [item]);
    return { ok: true };
  }

  /** every instruction the session holds, oldest first; the queue is empty after */
  take(session: string): readonly Instruction[] {
    const q = this.bySession.get(session);
    if (!q) return [];
    this.bySession.delete(session);
    return q;
  }

  has(session: string): boolean {
    return this.bySession.has(session);
  }
}
