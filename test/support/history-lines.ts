import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** Every event line of the history files (`*.jsonl`) under `dir`, any depth, raw, in file-name order; a missing dir has none. */
export function historyLines(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d).sort();
    } catch {
      return;
    }
    for (const n of names) {
      const p = path.join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (n.endsWith('.jsonl')) for (const line of readFileSync(p, 'utf8').split('\n')) if (line.trim()) out.push(line);
    }
  };
  walk(dir);
  return out;
}

/** The same lines, parsed. */
export const historyEvents = (dir: string): Record<string, any>[] => historyLines(dir).map((l) => JSON.parse(l) as Record<string, any>);
