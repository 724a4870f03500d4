import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { scanJson } from '../../../src/transport/json-scan.js';
import { BodyRefusal, knownDepth, parseBounded } from '../../../src/transport/json-body.js';
import { nestsDeeperThan } from '../../../src/daemon/server.js';
import { Assembler, splitValue } from '../../../src/transport/json-parts.js';

const limits = { maxNodes: 1_000_000, maxDepth: 64 };
const bytes = (s: string) => Buffer.from(s, 'utf8');

/** Nodes as documented: every value and every object key. */
function countNodes(v: unknown): number {
  if (typeof v !== 'object' || v === null) return 1;
  if (Array.isArray(v)) return 1 + v.reduce((n: number, x) => n + countNodes(x), 0);
  return 1 + Object.entries(v).reduce((n, [, x]) => n + 1 + countNodes(x), 0);
}

/** A JSON.parse reviver that drops what the daemon strips: `__proto__` keys and `constructor` keys holding a `prototype`. */
function withoutPoisonKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') return undefined;
  if (key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype')) return undefined;
  return value;
}

describe('the pre-parse scan counts exactly and parses like JSON.parse', () => {
  it('any JSON value, compact or indented: the same value as JSON.parse, the documented node count', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.boolean(), (v, indent) => {
        const text = JSON.stringify(v, null, indent ? 2 : undefined);
        const scan = scanJson(bytes(text), limits);
        expect(scan).toMatchObject({ ok: true, nodes: countNodes(JSON.parse(text)) });
        // as JSON.parse, less the keys that are stripped on purpose (__proto__, constructor.prototype)
        expect(parseBounded(bytes(text), limits)).toEqual(JSON.parse(text, withoutPoisonKeys));
      }),
      { numRuns: 300 },
    );
  });

  it('strings full of quotes, backslashes and brackets count as one node each', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: fc.constantFrom('"', '\\', '{', '[', ']', '}', 'a', ',', ':', 'é') })), (items) => {
        const text = JSON.stringify(items);
        expect(scanJson(bytes(text), limits)).toMatchObject({ ok: true, nodes: 1 + items.length, maxDepth: 1 });
      }),
    );
  });

  it('the caps are exact: 64 levels pass, 65 are refused; the node cap likewise', () => {
    const nest = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    expect(scanJson(bytes(nest(64)), limits).ok).toBe(true);
    expect(scanJson(bytes(nest(65)), limits)).toEqual({ ok: false, reason: 'too-deep' });
    // what the scan measured is remembered, and agrees with the walk it replaces
    const v = parseBounded(bytes(nest(64)), limits);
    expect(knownDepth(v)).toBe(64);
    expect([nestsDeeperThan(v, 64), nestsDeeperThan(v, 63)]).toEqual([false, true]);
    expect([nestsDeeperThan(JSON.parse(nest(64)), 64), nestsDeeperThan(JSON.parse(nest(64)), 63)]).toEqual([false, true]);
    const arr = (n: number) => `[${Array.from({ length: n }, () => '1').join(',')}]`;
    expect(scanJson(bytes(arr(999)), { maxNodes: 1000, maxDepth: 64 }).ok).toBe(true);
    expect(scanJson(bytes(arr(1000)), { maxNodes: 1000, maxDepth: 64 })).toEqual({ ok: false, reason: 'too-many-nodes' });
    expect(() => parseBounded(bytes(arr(1000)), { maxNodes: 1000, maxDepth: 64 })).toThrow(BodyRefusal);
  });

  it('a body of a million keys is refused after scanning only up to the cap', () => {
    const keys = Array.from({ length: 1_000_000 }, (_, i) => `"k${i}":0`).join(',');
    const body = bytes(`{"hook_event_name":"x","tool_input":{${keys}}}`);
    // how long the refusal takes, against a scan of as many nodes accepted: bench suite bounded-work (bounded.json_node_cap)
    expect(scanJson(body, { maxNodes: 200_000, maxDepth: 64 })).toEqual({ ok: false, reason: 'too-many-nodes' });
  });

  it('__proto__ and constructor.prototype keys are stripped, escaped spellings too; empty and invalid bodies refused', () => {
    const v = parseBounded(bytes('{"a":{"__proto__":{"x":1},"constructor":{"prototype":{}},"\\u005f_proto__":2,"keep":"\\"__proto__\\""}}'), limits);
    expect(v).toEqual({ a: { keep: '"__proto__"' } });
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(() => parseBounded(bytes(''), limits)).toThrow(BodyRefusal);
    expect(() => parseBounded(bytes('  \n '), limits)).toThrow(BodyRefusal);
    expect(() => parseBounded(bytes('{"a":'), limits)).toThrow(SyntaxError);
    expect(parseBounded(bytes('\ufeff{"a":1}'), limits)).toEqual({ a: 1 });
  });

  it('only keys make a body suspect: escaped or proto-like VALUES skip the strip walk, keys before any whitespace and colon do not', () => {
    // a tool result is a JSON text inside a string: full of escapes, never a key
    expect(scanJson(bytes('{"result":"{\\"output\\": \\"ok\\"}","v":["__proto__","constructor"]}'), limits)).toMatchObject({ ok: true, suspectKeys: false });
    for (const key of ['"__proto__"', '"constructor"', '"\\u005f_proto__"']) {
      for (const gap of ['', ' ', '\n\t ', '\r\n']) {
        const text = `{"a":{${key}${gap}:{"prototype":{"x":1}},"keep":1}}`;
        expect(scanJson(bytes(text), limits)).toMatchObject({ ok: true, suspectKeys: true });
        expect(parseBounded(bytes(text), limits)).toEqual({ a: { keep: 1 } });
      }
    }
  });
});

describe('large values cross from the worker in parts', () => {
  it('split and reassembled: the same value, keys in the same order', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 8, max: 400 }), (v, part) => {
        const a = new Assembler();
        for (const batch of splitValue(v, part)) a.apply(batch);
        expect(JSON.stringify(a.value)).toBe(JSON.stringify(v));
      }),
      { numRuns: 300 },
    );
  });
});
