// The shape every benchmark suite reports in, shared by the runner (test/bench/run.ts) and the suites
// (test/bench/suites/*.ts). A figure is measured against a yardstick taken in the same run, on the same machine;
// the ratio is what the README shows and what a budget checks. Benchmarks assert nothing themselves: the runner
// compares ratios with budgets and, in CI's short run, fails only when one breaks its budget by a wide margin.

/** One measured quantity: a median (or a total) with its spread, in `unit`. */
export interface Measure {
  readonly value: number;
  readonly unit: string;
  /** p95 (or the worst run) of the same series, when the figure is a distribution */
  readonly p95?: number;
  /** how many samples the value summarises */
  readonly n?: number;
}

/** A limit on a figure's ratio: `max` (ratio ≤ max) or `min` (ratio ≥ min). */
export type Limit = { readonly max: number } | { readonly min: number };

/**
 * A budget on a figure's ratio. `notMet`: a budget this code does not meet yet, with the reason the README gives;
 * CI's short run then guards the level measured today instead (`ci`: a regression past it fails), so a known gap
 * neither blocks every run nor hides a regression.
 */
export type Budget = Limit & { readonly notMet?: { readonly why: string; readonly ci: Limit } };

export interface Figure {
  /** stable id, e.g. `shim.start`; the README table and the JSON key on it */
  readonly id: string;
  /** what a reader sees in the table */
  readonly label: string;
  readonly measure: Measure;
  /** the yardstick measured in the same run; absent for a figure that is its own yardstick (a count, a ms bound) */
  readonly yardstick?: { readonly label: string; readonly measure: Measure };
  /** measure.value / yardstick.value (or, without a yardstick, the value itself against the budget) */
  readonly ratio: number;
  readonly budget?: Budget;
  /** free-form detail kept in the JSON (per-phase breakdowns, counts) */
  readonly detail?: Record<string, unknown>;
}

export interface BenchContext {
  /** CI's short run: fewer samples, shorter durations; figures still real */
  readonly short: boolean;
  /** a progress line on stderr */
  log(msg: string): void;
  /** a fresh temporary directory, removed after the run */
  tmp(prefix: string): string;
  /**
   * Run one of scripts/provision-*.sh (e.g. `provision-otel.sh`) once per run and return its `NAME=path` lines;
   * the same cache the e2e tier's global setup uses. Optional so that a context built elsewhere still fits.
   */
  provision?(script: string, env?: Record<string, string>): Promise<ReadonlyMap<string, string>>;
}

export interface Suite {
  readonly name: string;
  /** one line for the JSON: what the suite measures and how (scale, transport, in-process or real) */
  readonly about?: string;
  run(ctx: BenchContext): Promise<readonly Figure[]>;
}
