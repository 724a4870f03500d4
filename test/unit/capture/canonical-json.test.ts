import { describe, expect, it } from 'vitest';

import { canonicalJson, contentDigest } from '../../../src/capture/canonical-json.js';

describe('contentDigest', () => {
  it('matches the pinned digests', () => {
    expect(contentDigest({ command: 'npm test' })).toBe('9178ac939ad908d8fd89e97596cdc0e5');
    expect(contentDigest('fix the failing build')).toBe('fcaa85fdd55703139ec7363834c4063a');
    expect(
      contentDigest({
        question: 'Which deployment target?',
        choices: [' staging ', { description: 'production' }, '', 'staging-eu', 'extra-5th', 'extra-6th'],
      }),
    ).toBe('bc093e95015241bcbb7e511880e8a5b1');
  });

  it('is 32 lowercase hex characters', () => {
    expect(contentDigest(null)).toMatch(/^[0-9a-f]{32}$/);
  });

  it('is independent of key order at every depth', () => {
    const a = { b: 1, a: { y: [1, { q: 2, p: 1 }], x: 'z' } };
    const b = { a: { x: 'z', y: [1, { p: 1, q: 2 }] }, b: 1 };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(contentDigest(a)).toBe(contentDigest(b));
  });

  it('distinguishes array order and types', () => {
    expect(contentDigest([1, 2])).not.toBe(contentDigest([2, 1]));
    expect(contentDigest('1')).not.toBe(contentDigest(1));
  });
});

describe('canonicalJson', () => {
  it('sorts keys recursively and keeps nested arrays in order', () => {
    expect(canonicalJson({ z: [[3, 1], [{ b: 2, a: 1 }]], a: null })).toBe('{"a":null,"z":[[3,1],[{"a":1,"b":2}]]}');
  });

  it('sorts keys by UTF-16 code unit, not locale', () => {
    // 'Z' (0x5a) < 'a' (0x61) < 'é' (0xe9) < '😀' (0xd83d...) < 'ｚ' (0xff5a)
    expect(canonicalJson({ ｚ: 5, '😀': 4, é: 3, a: 2, Z: 1 })).toBe('{"Z":1,"a":2,"é":3,"😀":4,"ｚ":5}');
  });

  it('serializes unicode and escapes like JSON.stringify', () => {
    const s = 'naïve 日本 😀 "q" \\ \n \u2028';
    expect(canonicalJson({ s })).toBe(`{"s":${JSON.stringify(s)}}`);
    expect(contentDigest({ s })).toBe(contentDigest(JSON.parse(canonicalJson({ s }))));
  });

  it('drops undefined members and nulls undefined array items, like JSON', () => {
    expect(canonicalJson({ a: undefined, b: [undefined, 1] })).toBe('{"b":[null,1]}');
  });

  it('matches JSON.stringify for primitives', () => {
    for (const v of [0, -0, 1.5, 1e21, true, false, null, 'x', Number.NaN]) {
      expect(canonicalJson(v)).toBe(JSON.stringify(v));
    }
  });
});
