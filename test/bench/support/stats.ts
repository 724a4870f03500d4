import { spawn } from 'node:child_process';
import type { Budget, Figure, Measure } from '../bench-types.js';

/** The q-quantile of a series (nearest rank). */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

export const median = (xs: readonly number[]): number => quantile(xs, 0.5);

/** A distribution's median with its p95, in `unit`. */
export function dist(xs: readonly number[], unit: string, digits = 2): Measure {
  const r = (x: number) => Number(x.toFixed(digits));
  return { value: r(median(xs)), p95: r(quantile(xs, 0.95)), n: xs.length, unit };
}

export const round = (x: number, digits = 3): number => Number(x.toFixed(digits));

/** A figure whose ratio is measure ÷ yardstick. */
export function ratioFigure(f: Omit<Figure, 'ratio' | 'yardstick'> & { yardstick: { label: string; measure: Measure } }, budget?: Budget): Figure {
  return { ...f, ratio: round(f.measure.value / f.yardstick.measure.value), ...(budget ? { budget } : {}) };
}

/** Wall time of one child process from spawn to close (stdin closed at once, output ignored). */
export function timeProcess(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env, input = ''): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c = spawn(cmd, args, { env, stdio: ['pipe', 'ignore', 'ignore'] });
    c.on('error', reject);
    c.on('close', () => resolve(performance.now() - t0));
    c.stdin.on('error', () => undefined);
    c.stdin.end(input);
  });
}

/**
 * Run `series` round by round, their order rotated every round, so that machine noise (another job, a GC, a
 * frequency change) lands on every series alike: the pairing the ratios rely on.
 */
export async function interleaved<K extends string>(rounds: number, series: Record<K, () => Promise<number>>): Promise<Record<K, number[]>> {
  const keys = Object.keys(series) as K[];
  const out = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < keys.length; i++) {
      const k = keys[(i + r) % keys.length]!;
      out[k].push(await series[k]());
    }
  }
  return out;
}
