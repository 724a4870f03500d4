/**
 * One of the hold cap's slots, taken when a call is checked against the cap
 * (its card not raised yet) and given back when its card resolves or the hold
 * is not made after all. `release` is idempotent: every path that ends the
 * hold may call it.
 */
export interface HoldSlot {
  release(): void;
}

/**
 * The hold cap as a counter of reservations: a call takes a slot at the check
 * itself, in the same turn, so calls checked concurrently (their cards still
 * being written) cannot all pass. Held cards keep their slot until they
 * resolve.
 */
export class HoldSlots {
  private taken = 0;

  constructor(readonly max: number) {}

  /** a slot, or undefined when all `max` are taken (the caller counts the refusal) */
  reserve(): HoldSlot | undefined {
    if (this.taken >= this.max) return undefined;
    this.taken++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.taken--;
      },
    };
  }

  /** slots taken: cards held plus calls checked whose hold is not made yet */
  get size(): number {
    return this.taken;
  }
}
