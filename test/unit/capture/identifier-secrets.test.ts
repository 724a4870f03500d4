/**
 * The identifier check (`src/capture/identifier-secrets.ts`) against the full
 * detector it fronts: whatever it answers, from its remembered clean verdicts
 * or not, is what the detector says. And its stand-in is itself a clean
 * identifier, stable, and carries nothing of the value.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { identifierHasSecret, identifierStandIn, safeIdentifier, CLEAN_CACHE_SIZE } from '../../../src/capture/identifier-secrets.js';
import type { RedactOptions } from '../../../src/capture/redact.js';
import { code } from '../../../src/hermes/envelope.js';
import { identifier } from '../../../src/mapping/extensions.js';

const expected = (v: string, opts: RedactOptions): string => (identifierHasSecret(v, opts) ? identifierStandIn(v) : v);

/** Pieces identifiers and secrets are made of, so random strings hit the rules' prefixes and lengths. */
const PIECES = [
  'sk-',
  'sk-proj-',
  'ghp_',
  'github_pat_',
  'xoxb-',
  'AKIA',
  'eyJ',
  '.',
  '-',
  '_',
  ':',
  '/',
  '@',
  '=',
  'token=',
  'api_key:',
  'Bearer ',
  'https://u:p@h',
  'AIza',
  'npm_',
  'hf_',
  'glpat-',
];
const piece = fc.oneof(fc.constantFrom(...PIECES), fc.stringMatching(/^[A-Za-z0-9]{1,40}$/), fc.string({ maxLength: 6 }));
const identifierLike = fc.array(piece, { maxLength: 8 }).map((parts) => parts.join(''));
const anyValue = fc.oneof(
  identifierLike,
  fc.string({ maxLength: 80 }),
  fc.constantFrom('hermes-4', 'anthropic/claude-sonnet-4', 'terminal', 'leaf', 'completed'),
);

describe('safeIdentifier answers exactly as the detector', () => {
  it('for random identifier-like and arbitrary strings, asked again and again (remembered clean verdicts)', () => {
    const opts: RedactOptions = {};
    fc.assert(
      fc.property(fc.array(anyValue, { minLength: 1, maxLength: 20 }), (values) => {
        for (const v of [...values, ...values]) expect(safeIdentifier(v, opts)).toBe(expected(v, opts));
      }),
      { numRuns: 400 },
    );
  });

  it("per operator configuration: a value remembered clean under one is still a configured secret under another's", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z][a-z0-9-]{5,30}$/), (v) => {
        const plain: RedactOptions = {};
        const configured: RedactOptions = { secretValues: [v] };
        expect(safeIdentifier(v, plain)).toBe(expected(v, plain));
        expect(safeIdentifier(v, configured)).toBe(identifierStandIn(v));
        expect(safeIdentifier(`model-${v}`, configured)).toBe(identifierStandIn(`model-${v}`));
      }),
      { numRuns: 200 },
    );
  });

  it('after more distinct clean values than it remembers, still the detector’s answer', () => {
    const opts: RedactOptions = {};
    const values = Array.from({ length: CLEAN_CACHE_SIZE + 50 }, (_, i) => `tool-${i}`);
    for (const v of values) expect(safeIdentifier(v, opts)).toBe(v);
    const planted = ['ghp', 'R8t2Yk5Wq9Lm3Nv7Bx1Cz4Df6Gh0Js2Pa8Qe'].join('_');
    expect(safeIdentifier(`tool-${planted}`, opts)).toBe(identifierStandIn(`tool-${planted}`));
    for (const v of values.slice(0, 100)) expect(safeIdentifier(v, opts)).toBe(v);
  });
});

describe('the stand-in', () => {
  it('is a stable identifier, itself clean, with no run of the value in it', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 200 }), (v) => {
        const s = identifierStandIn(v);
        expect(s).toBe(identifierStandIn(v));
        expect(s).toMatch(/^redacted-[0-9a-f]{16}$/);
        expect(code(s)).toBe(s);
        expect(identifier(s)).toBe(s);
        expect(identifierHasSecret(s)).toBe(false);
        expect(safeIdentifier(s)).toBe(s);
      }),
      { numRuns: 200 },
    );
  });

  it('the planted forms of the report are found: a key in a model, a token in a role, a JWT as a pattern key', () => {
    const key = ['sk', 'proj', 'Xq3vT9kLm2Np8Rs4Wy6Zb1Cd5Fg7Hj0'].join('-');
    const gh = ['ghp', 'R8t2Yk5Wq9Lm3Nv7Bx1Cz4Df6Gh0Js2Pa8Qe'].join('_');
    const jwt = ['eyJhbGciOiJIUzI1NiJ9', 'eyJzIjoxfQ', 'c2lnbmF0dXJlLXBhcnQtMDE'].join('.');
    for (const v of [`gpt-x?key=${key}`, `model-${key}`, `leaf-${gh}`, jwt, `leaf-${jwt}`, `rule_${jwt}`]) expect(identifierHasSecret(v), v).toBe(true);
    for (const v of [
      'hermes-4',
      'anthropic/claude-sonnet-4',
      'openrouter',
      'gpt-4o-2024-08-06',
      'leaf',
      'completed',
      'call_abc123',
      '20261201_090000_5ec7e7',
    ]) {
      expect(identifierHasSecret(v), v).toBe(false);
    }
  });
});
