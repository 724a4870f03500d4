/**
 * The planted-secret corpus against the §9.4 pipeline, one plant at a time and
 * all together, as plain text, inside JSON-encoded text (a tool result) and
 * inside objects; the ordinary-command corpus must come through untouched.
 * The fault suite drives the same corpus through the real daemon
 * (test/faults/secret-corpus.test.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SECRET_MARKER, redactText, redactValue } from '../../../src/capture/redact.js';
import { HOSTED_RULE_IDS, PRESET_RULE_IDS, SKIPPED_RULES, scanWithSecretlint } from '../../../src/capture/secretlint.js';
import { ORDINARY_COMMANDS, plantedSecrets, type PlantedSecret } from '../../support/secret-corpus.js';

const plants = plantedSecrets();
const WINDOW = 10;

/** The first 10-character run of the secret found in `out`, if any (a partial leak counts). */
function leakedPart(out: string, p: PlantedSecret): string | undefined {
  for (let i = 0; i + WINDOW <= p.secret.length; i++) {
    const w = p.secret.slice(i, i + WINDOW);
    if (out.includes(w)) return w;
  }
  return undefined;
}

/** The carrier line without its `kNN ` tag. */
const carrier = (p: PlantedSecret): string => (p.standalone === true ? p.line : p.line.slice(p.id.length + 1));

describe('the planted corpus', () => {
  it('has at least 60 secrets, unique ids, every secret inside its line', () => {
    expect(plants.length).toBeGreaterThanOrEqual(60);
    expect(new Set(plants.map((p) => p.id)).size).toBe(plants.length);
    for (const p of plants) {
      expect(p.secret.length, p.id).toBeGreaterThanOrEqual(WINDOW);
      expect(p.line.includes(p.secret) || p.line.includes(p.secret.split('\n').join('\\n')), p.id).toBe(true);
    }
  });

  it('plants every scanner rule of the installed secretlint preset, and the preset itself finds each plant of its family', () => {
    const families = new Set(plants.map((p) => p.family));
    const missing = HOSTED_RULE_IDS.filter((id) => !families.has(`secretlint:${id}`));
    expect(missing, 'preset rules without a planted secret (add plants when the preset grows)').toEqual([]);
    for (const p of plants.filter((x) => x.family.startsWith('secretlint:'))) {
      const rule = p.family.slice('secretlint:'.length);
      expect(PRESET_RULE_IDS, `${p.id}: ${rule} is not a rule of the installed preset`).toContain(rule);
      const reported = scanWithSecretlint(carrier(p)).reports.map((r) => r.rule);
      expect(reported, `${p.id}: the preset's own ${rule} rule does not recognise the plant`).toContain(rule);
    }
  });

  it('every preset rule is either run or skipped with a reason', () => {
    for (const id of PRESET_RULE_IDS) expect(HOSTED_RULE_IDS.includes(id) || Object.hasOwn(SKIPPED_RULES, id), id).toBe(true);
  });

  it("plants the tracker's six leaked forms", () => {
    const forms = ['cli:mysql-p', 'cli:curl-u', 'cli:env-assignment', 'secretlint:sendgrid'];
    for (const f of forms)
      expect(
        plants.some((p) => p.family === f),
        f,
      ).toBe(true);
    expect(plants.some((p) => p.line.includes('--password '))).toBe(true);
    expect(plants.some((p) => p.line.includes('--token '))).toBe(true);
  });
});

describe('each plant alone', () => {
  for (const p of plants) {
    it(`${p.id} ${p.family}`, () => {
      const out = redactText(p.line);
      expect(leakedPart(out, p), out).toBeUndefined();
      expect(out).toContain(SECRET_MARKER);
      if (p.standalone !== true) expect(out.startsWith(`${p.id} `), out).toBe(true);
      expect(redactText(out)).toBe(out);

      // inside JSON-encoded text, as a tool result carries it (quotes and newlines escaped)
      const encoded = JSON.stringify({ output: `step 1\n${carrier(p)}\nstep 3` });
      const encodedOut = redactText(encoded);
      expect(leakedPart(encodedOut, p), encodedOut).toBeUndefined();
      expect(redactText(encodedOut)).toBe(encodedOut);

      // as a member of tool arguments
      const value = JSON.stringify(redactValue({ command: carrier(p), args: [carrier(p)], env: { NOTE: carrier(p) } }));
      expect(leakedPart(value, p), value).toBeUndefined();
    });
  }
});

describe('all plants together', () => {
  const lines = plants.filter((p) => p.standalone !== true);
  const text = lines.map((p) => p.line).join('\n');

  it('none leaks, every line keeps its tag, and the result is a fixed point', () => {
    const out = redactText(text, { home: '/home/dev' });
    expect(plants.filter((p) => leakedPart(out, p) !== undefined).map((p) => p.id)).toEqual([]);
    expect(lines.filter((p) => !out.includes(`${p.id} `)).map((p) => p.id)).toEqual([]);
    expect(redactText(out, { home: '/home/dev' })).toBe(out);
  });

  it('none leaks from the JSON-encoded form either', () => {
    const out = redactText(JSON.stringify({ output: text, exit_code: 0 }));
    expect(plants.filter((p) => leakedPart(out, p) !== undefined).map((p) => p.id)).toEqual([]);
  });
});

describe('ordinary commands stay byte for byte', () => {
  it('has at least 40 of them', () => {
    expect(ORDINARY_COMMANDS.length).toBeGreaterThanOrEqual(40);
  });

  for (const c of ORDINARY_COMMANDS) {
    it(c, () => {
      expect(redactText(c)).toBe(c);
      const encoded = JSON.stringify({ output: `$ ${c}\ndone` });
      expect(redactText(encoded)).toBe(encoded);
    });
  }

  it('all together, and with every plant between them only the plants change', () => {
    const joined = ORDINARY_COMMANDS.join('\n');
    expect(redactText(joined)).toBe(joined);
    const mixed = ORDINARY_COMMANDS.flatMap((c, i) => [c, plants[i % plants.length]!.line]).join('\n');
    const out = redactText(mixed);
    for (const c of ORDINARY_COMMANDS) expect(out).toContain(c);
  });
});

describe('redaction is a fixed point on random mixtures of plants, commands and their pieces', () => {
  const pieces = [
    ...plants.map((p) => p.line),
    ...plants.map((p) => p.secret),
    ...ORDINARY_COMMANDS,
    ' ',
    '\n',
    '\\n',
    '"',
    "'",
    '\\"',
    ':',
    '=',
    '@',
    '/',
    '-p',
    '--password ',
    'mysql ',
    'curl -u a:',
    'MY_DB_PW=',
    SECRET_MARKER,
  ];
  it('redactText(redactText(x)) === redactText(x), even with pieces glued together', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 8 }), (parts) => {
        const once = redactText(parts.join(''), { home: '/home/dev' });
        expect(redactText(once, { home: '/home/dev' })).toBe(once);
      }),
      { numRuns: 300 },
    );
  });

  it('no plant survives among other text (plants and pieces separated as text separates them)', () => {
    const separators = [' ', '\n', '\\n', '; ', ' | ', '\t', ', '];
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...pieces), fc.constantFrom(...separators)), { minLength: 1, maxLength: 8 }), (parts) => {
        const once = redactText(parts.map(([piece, sep]) => piece + sep).join(''), { home: '/home/dev' });
        const has = (x: string) => parts.some(([piece]) => piece === x);
        // a bare secret piece is just text (a password alone is not recognisable); plants are checked in their lines
        for (const p of plants) if (has(p.line) && !has(p.secret)) expect(leakedPart(once, p), `${p.id} in ${once}`).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });
});
