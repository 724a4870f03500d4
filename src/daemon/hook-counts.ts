import { MAPPED_HOOKS } from '../mapping/map-hook.js';

/** Hook names counted by name: those the mapping knows; any other counts as `other` (a hook name is the sender's text). */
const KNOWN: ReadonlySet<string> = new Set(MAPPED_HOOKS);

/** Hooks received per Hermes hook name, for the `aep.hooks` metric: one property increment per hook. */
export class HookCounts {
  private readonly counts: Record<string, number> = Object.create(null) as Record<string, number>;

  count(hook: string): void {
    const name = KNOWN.has(hook) ? hook : 'other';
    this.counts[name] = (this.counts[name] ?? 0) + 1;
  }

  snapshot(): Readonly<Record<string, number>> {
    return { ...this.counts };
  }
}
