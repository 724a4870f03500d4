import { z } from 'zod';

/**
 * The plugin transport's drop reports (plugin/hermes-aep/__init__.py): a hook the plugin could not queue (its
 * in-memory queue full) is dropped on Hermes's side and counted there; the count since its last accepted report
 * rides the next delivery as this header, and the daemon adds it to /healthz `transport.plugin.dropped` once that
 * delivery is answered 200 (the plugin re-sends the count otherwise, so nothing is counted twice).
 */
export const DROPPED_HEADER = 'x-hermes-aep-dropped';

/** A decimal count, no sign, no leading zeros, at most 9 digits (a repeated header arrives joined by ", ": refused). */
const dropCount = z.string().regex(/^(0|[1-9][0-9]{0,8})$/);

export class DropReports {
  dropped = 0;
  reports = 0;
  refused = 0;

  /** The header's count (0 when absent), or undefined when it is present but not a valid count. */
  read(header: string | string[] | undefined): number | undefined {
    if (header === undefined) return 0;
    const parsed = dropCount.safeParse(header);
    if (!parsed.success) {
      this.refused++;
      return undefined;
    }
    return Number(parsed.data);
  }

  /** Called once the delivery carrying the count was answered 200. */
  add(n: number): void {
    if (n <= 0) return;
    this.dropped += n;
    this.reports++;
  }

  stats(): { dropped: number; reports: number; refused: number } {
    return { dropped: this.dropped, reports: this.reports, refused: this.refused };
  }
}
