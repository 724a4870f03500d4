import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { PII_MARKER, SECRET_MARKER, isCredentialKey, redactText, redactValue, type RedactOptions } from '../../../src/capture/redact.js';

type CorpusCase<I> = {
  name: string;
  input: I;
  opts?: RedactOptions;
  must_contain?: string[];
  must_not_contain?: string[];
};

type RedactionCorpus = {
  text_cases: CorpusCase<string>[];
  value_cases: CorpusCase<unknown>[];
};

const corpus = JSON.parse(readFileSync(new URL('../../../fixtures/aep/redaction/cases.json', import.meta.url), 'utf8')) as RedactionCorpus;

function assertCase(output: string, c: CorpusCase<unknown>): void {
  for (const needle of c.must_contain ?? []) expect(output).toContain(needle);
  for (const needle of c.must_not_contain ?? []) expect(output).not.toContain(needle);
}

describe('redaction corpus: text cases', () => {
  it('has cases', () => {
    expect(corpus.text_cases.length).toBeGreaterThan(0);
  });
  for (const c of corpus.text_cases) {
    it(c.name, () => {
      const out = redactText(c.input, c.opts);
      assertCase(out, c);
      expect(redactText(out, c.opts)).toBe(out);
    });
  }
});

describe('redaction corpus: value cases', () => {
  it('has cases', () => {
    expect(corpus.value_cases.length).toBeGreaterThan(0);
  });
  for (const c of corpus.value_cases) {
    it(c.name, () => {
      const before = JSON.stringify(c.input);
      const out = redactValue(c.input, c.opts);
      assertCase(JSON.stringify(out), c);
      // Deep copy: the input is never mutated.
      expect(JSON.stringify(c.input)).toBe(before);
    });
  }
});

describe('redactValue', () => {
  it('replaces any shape under a credential-named key and keeps the key', () => {
    const out = redactValue({
      auth: { user: 'u', pass: 'p' },
      Client_Secret: ['a', 'b'],
      'x-api-key': 123,
      cookie: null,
      max_tokens: 4096,
      items: [{ password: 'pw' }, 'plain'],
    });
    expect(out).toEqual({
      auth: SECRET_MARKER,
      Client_Secret: SECRET_MARKER,
      'x-api-key': SECRET_MARKER,
      cookie: SECRET_MARKER,
      max_tokens: 4096,
      items: [{ password: SECRET_MARKER }, 'plain'],
    });
  });

  it('passes operator options to nested strings', () => {
    const out = redactValue({ path: '/srv/op/x', nested: ['uses hunter-value-9'] }, { home: '/srv/op', secretValues: ['hunter-value-9'] });
    expect(out).toEqual({ path: '~/x', nested: [`uses ${SECRET_MARKER}`] });
  });

  it('keeps a __proto__ member as an own property', () => {
    const input = JSON.parse('{"__proto__": {"token": "t0k"}, "a": "b"}') as unknown;
    const out = redactValue(input) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe(`{"__proto__":{"token":"${SECRET_MARKER}"},"a":"b"}`);
  });

  it('classifies credential key names', () => {
    for (const k of ['token', 'GITHUB_TOKEN', 'api-key', 'ApiKey', 'private_key', 'Authorization', 'set-cookie', 'passwd']) {
      expect(isCredentialKey(k), k).toBe(true);
    }
    for (const k of ['max_tokens', 'tokenizer', 'author', 'kind', 'key', 'gen_ai.usage.input_tokens']) {
      expect(isCredentialKey(k), k).toBe(false);
    }
  });
});

describe('redactText beyond the corpus', () => {
  it('keeps the auth scheme readable and redacts the credential', () => {
    expect(redactText('Authorization: Basic dXNlcjpwYXNz')).toBe(`Authorization: Basic ${SECRET_MARKER}`);
  });

  it('keeps JSON quoting around a redacted value', () => {
    expect(redactText('{"password": "correct horse", "n": 1}')).toBe(`{"password": "${SECRET_MARKER}", "n": 1}`);
  });

  it('redacts configured names in NAME=value and NAME: value forms', () => {
    const opts: RedactOptions = { secretNames: ['DEPLOY_HOOK', 'db.pass'] };
    expect(redactText('DEPLOY_HOOK=https://hooks.test/abc and db.pass: x9', opts)).toBe(`DEPLOY_HOOK=${SECRET_MARKER} and db.pass: ${SECRET_MARKER}`);
    expect(redactText('MY_DEPLOY_HOOK_URL=fine', opts)).toBe('MY_DEPLOY_HOOK_URL=fine');
  });

  it('does not corrupt markers when a configured value is a marker substring', () => {
    const opts: RedactOptions = { secretValues: ['secret', 'REDACTED'] };
    const once = redactText('token=abc and secret here', opts);
    expect(once).toBe(`token=${SECRET_MARKER} and ${SECRET_MARKER} here`);
    expect(redactText(once, opts)).toBe(once);
  });

  it('redacts URL credentials', () => {
    expect(redactText('postgres://app:pa55word@db.internal:5432/x')).toBe(`postgres://app:${SECRET_MARKER}@db.internal:5432/x`);
  });

  it('replaces homes: operator, other users, /root, Windows; not look-alikes', () => {
    const opts: RedactOptions = { home: '/srv/op/' };
    expect(redactText('at /srv/op/a, /root/.bashrc, C:\\Users\\eve\\x', opts)).toBe('at ~/a, ~/.bashrc, ~\\x');
    expect(redactText('/srv/operator/a and /rootfs and /var/home/x', opts)).toBe('/srv/operator/a and /rootfs and /var/home/x');
  });

  it('ignores a degenerate home of "/"', () => {
    expect(redactText('/etc/hosts', { home: '/' })).toBe('/etc/hosts');
  });

  it('redacts common phone shapes but not versions, dates or counts', () => {
    expect(redactText('ring 555-123-4567 or (555) 987-6543')).toBe(`ring ${PII_MARKER} or ${PII_MARKER}`);
    expect(redactText('+44 20 7946 0958')).toBe(PII_MARKER);
    const benign = 'v1.2.3 on 2026-07-03 at 10:00:05, 1234 items, build 20260703, +12 lines';
    expect(redactText(benign)).toBe(benign);
  });

  it('redacts an unterminated PEM block to the end', () => {
    expect(redactText('a\n-----BEGIN PRIVATE KEY-----\nMIIB')).toBe(`a\n${SECRET_MARKER}`);
  });

  it('does not treat counters as credentials', () => {
    const s = 'max_tokens: 4096, tokens=12, author: jane';
    expect(redactText(s, { pii: false })).toBe(s);
  });
});

describe('redactText idempotence', () => {
  const opts: RedactOptions = { home: '/home/op', secretValues: ['zz'] };
  const cascades = [
    '555.123.4567/home/al',
    'zzeyJa.b.c\n',
    '/home/al\n+1 555.123.4567sk-abcdefghijklmnopqrstuvwx~password',
    "bearer C:\\Users\\x'",
    'example.comtoken/home/al+1 zzghp_AbCdEfGhIjKlMnOpQrStUv]',
    'curl -H \'Authorization: Bearer abc.def\' -d \'{"token": "x y"}\'',
  ];
  for (const input of cascades) {
    it(`is a fixed point after one call: ${JSON.stringify(input)}`, () => {
      const once = redactText(input, opts);
      expect(redactText(once, opts)).toBe(once);
    });
  }
});

describe('redactText robustness', () => {
  const MB = 1 << 20;
  const inputs: Array<[string, string]> = [
    ['letters', 'a'.repeat(MB)],
    ['spaces after a key', `token${' '.repeat(MB)}`],
    ['unterminated quotes', 'token="a '.repeat(MB / 9)],
    ['repeated keys', 'tokentoken'.repeat(MB / 10)],
    ['repeated JWT heads', 'eyJ'.repeat(MB / 3)],
    ['email-ish runs', 'a.b-c'.repeat(MB / 5)],
    ['many at-signs', 'a@b.'.repeat(MB / 4)],
    ['digits', '1'.repeat(MB)],
    ['plus digits', '+1 2'.repeat(MB / 4)],
    ['repeated BEGIN', '-----BEGIN X-----'.repeat(MB / 17)],
    ['home-ish', '/home/'.repeat(MB / 6)],
    ['scheme-ish', 'ab+c:/'.repeat(MB / 6)],
  ];
  for (const [name, input] of inputs) {
    it(`completes on 1 MB of ${name}`, () => {
      const out = redactText(input, { home: '/home/op', secretNames: ['API'], secretValues: ['zz'] });
      expect(typeof out).toBe('string');
    });
  }

  it('completes on 1 MB of mixed realistic text and stays idempotent', () => {
    const chunk =
      'GITHUB_TOKEN=ghp_AbCdEfGhIjKlMnOpQrStUvWxYz012345 mail a.b@example.com from /home/alice/x ' +
      'Bearer abc.def-123 call +1 (555) 123-4567 eyJa.eyJb.c {"password": "p w"}\n';
    const input = chunk.repeat(Math.ceil(MB / chunk.length));
    const out = redactText(input);
    expect(out).not.toContain('ghp_AbCd');
    expect(out).not.toContain('a.b@example.com');
    expect(redactText(out)).toBe(out);
  });
});
