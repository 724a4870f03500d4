import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { gateFormValues } from '../../../src/capture/downlevel.js';
import type { CaptureLevel } from '../../../src/core/capture-levels.js';
import { SECRET_MARKER } from '../../../src/capture/redact.js';
import type { FormFieldSpec } from '../../../src/capture/types.js';

type GatingCase = {
  name: string;
  fields: FormFieldSpec[];
  values: Record<string, unknown>;
  ceiling: CaptureLevel;
  expect: Record<string, unknown>;
};

const corpus = JSON.parse(readFileSync(new URL('../../../fixtures/aep/capture-gating/cases.json', import.meta.url), 'utf8')) as { cases: GatingCase[] };

describe('capture-gating corpus', () => {
  it('has cases', () => {
    expect(corpus.cases.length).toBeGreaterThan(0);
  });
  for (const c of corpus.cases) {
    it(c.name, () => {
      const before = structuredClone(c.values);
      expect(gateFormValues(c.fields, c.values, c.ceiling)).toEqual(c.expect);
      expect(c.values).toEqual(before);
    });
  }
});

describe('gateFormValues beyond the corpus', () => {
  const fields: FormFieldSpec[] = [
    { id: 'note', type: 'string', label: 'Note' },
    { id: 'n', type: 'number', label: 'N' },
    { id: 'pick', type: 'select', label: 'Pick', multi: true, other: true, choices: [{ id: 'a' }, { id: 'b' }] },
  ];

  it('treats type-mismatched answers as free text', () => {
    expect(gateFormValues(fields, { n: '3 please', pick: ['a', 'custom'] }, 'metadata')).toEqual({});
    expect(gateFormValues(fields, { n: Number.POSITIVE_INFINITY }, 'metadata')).toEqual({});
  });

  it('runs free text through the pipeline at redacted and keeps it verbatim at full', () => {
    const values = { note: 'token=abc123 ok', pick: ['a', 'b'] };
    expect(gateFormValues(fields, values, 'redacted')).toEqual({ note: `token=${SECRET_MARKER} ok`, pick: ['a', 'b'] });
    expect(gateFormValues(fields, values, 'full')).toEqual(values);
  });

  it('returns an empty object for a non-object values map', () => {
    expect(gateFormValues(fields, 'x', 'full')).toEqual({});
    expect(gateFormValues(fields, ['a'], 'full')).toEqual({});
  });

  it('does not share arrays with the input', () => {
    const values = { pick: ['a'] };
    const out = gateFormValues(fields, values, 'metadata');
    expect(out['pick']).toEqual(['a']);
    expect(out['pick']).not.toBe(values.pick);
  });
});
