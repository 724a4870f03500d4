import { describe, expect, it } from 'vitest';
import { hookEnvelopeSchema } from '../../../src/hermes/envelope.js';
import { mapHook } from '../../../src/mapping/map-hook.js';
import { defaultPolicy } from '../../../src/capture/policy.js';
import { readJson } from '../../support/paths.js';

interface Case {
  input: unknown;
  expected: unknown[];
}
const fixture = readJson<{ hooks: Record<string, Case>; fallback: Case }>('fixtures/aep/hermes.json');
const cases: [string, Case][] = [...Object.entries(fixture.hooks), ['fallback', fixture.fallback]];

describe('the pinned Hermes mapping (fixtures/aep/hermes.json)', () => {
  it('has the 26 hook cases and the fallback', () => {
    expect(Object.keys(fixture.hooks)).toHaveLength(26);
    expect(cases).toHaveLength(27);
  });

  it.each(cases)('%s', (_name, c) => {
    const env = hookEnvelopeSchema.parse(c.input);
    // Deep equality through JSON: what goes on the wire is what is compared.
    expect(JSON.parse(JSON.stringify(mapHook(env, defaultPolicy())))).toEqual(c.expected);
  });
});
