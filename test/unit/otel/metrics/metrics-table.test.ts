import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { INSTRUMENTS, METRIC_ATTR, type InstrumentKind } from '../../../../src/otel/metrics/instrument-catalogue.js';
import { ROOT } from '../../../support/paths.js';

interface Row {
  readonly name: string;
  readonly instrument: string;
  readonly unit: string;
  readonly attributes: readonly string[];
}

/** docs/reference.md's Metrics table: one row per instrument. */
function metricRows(): Row[] {
  const doc = readFileSync(path.join(ROOT, 'docs', 'reference.md'), 'utf8');
  const start = doc.indexOf('\n## Metrics');
  expect(start, 'docs/reference.md has a "Metrics" section').toBeGreaterThan(-1);
  const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => {
      const [, name = '', instrument = '', unit = '', attributes = ''] = l.split('|').map((c) => c.trim());
      return {
        name: /^`([^`]+)`/.exec(name)?.[1] ?? name,
        instrument,
        unit: unit.replace(/`/g, ''),
        attributes: [...attributes.matchAll(/`([a-z_.]+)`/g)].map((m) => m[1]!),
      };
    });
}

/** What the table calls each kind of instrument. */
const WORD: Record<InstrumentKind, string> = { histogram: 'histogram', counter: 'counter', observableCounter: 'counter', observableGauge: 'gauge' };
const ATTRIBUTE_KEYS = new Set<string>(Object.values(METRIC_ATTR));

describe('the metrics table in docs/reference.md', () => {
  const rows = metricRows();
  const specs = Object.values(INSTRUMENTS);

  it('lists exactly the instrument catalogue, each instrument once', () => {
    const names = rows.map((r) => r.name);
    expect(new Set(names).size, 'an instrument listed twice').toBe(names.length);
    expect([...names].sort()).toEqual(specs.map((s) => s.name).sort());
  });

  it("gives each instrument the catalogue's kind and unit", () => {
    for (const spec of specs) {
      const row = rows.find((r) => r.name === spec.name);
      expect(row, spec.name).toBeDefined();
      expect(row!.instrument, spec.name).toBe(WORD[spec.kind]);
      expect(row!.unit, spec.name).toBe(spec.unit);
    }
  });

  it('names only attribute keys the instrument may carry', () => {
    for (const row of rows) {
      const spec = specs.find((s) => s.name === row.name)!;
      const keys = row.attributes.filter((a) => ATTRIBUTE_KEYS.has(a));
      expect(
        keys.filter((k) => !(spec.attributes as readonly string[]).includes(k)),
        `${row.name}: attributes the catalogue does not give it`,
      ).toEqual([]);
    }
  });
});
