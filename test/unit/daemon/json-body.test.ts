import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { PassThrough, Readable } from 'node:stream';
import { scanJson } from '../../../src/transport/json-scan.js';
import { BodyRefusal, JsonBodyParser, knownDepth, parseBounded } from '../../../src/daemon/json-body.js';
import { nestsDeeperThan } from '../../../src/daemon/server.js';
import { Assembler, splitValue } from '../../../src/daemon/json-parts.js';
import { JSON_WORKER } from '../../support/paths.js';

const limits = { maxNodes: 1_000_000, maxDepth: 64 };
const bytes = (s: string) => Buffer.from(s, 'utf8');

/** Nodes as documented: every value and every object key. */
function countNodes(v: unknown): number {
  if (typeof v !== 'object' || v === null) return 1;
  if (Array.isArray(v)) return 1 + v.reduce((n: number, x) => n + countNodes(x), 0);
  return 1 + Object.entries(v).reduce((n, [, x]) => n + 1 + countNodes(x), 0);
}

const framing = { tooLarge: () => Object.assign(new Error('too large'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE' }), badLength: () => new Error('bad length') };

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
    const t0 = performance.now();
    expect(scanJson(body, { maxNodes: 200_000, maxDepth: 64 })).toEqual({ ok: false, reason: 'too-many-nodes' });
    expect(performance.now() - t0).toBeLessThan(1_000);
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

  const parser = new JsonBodyParser({ maxBytes: 64 * 1024 * 1024, maxNodes: 200_000, maxDepth: 64, workerUrl: JSON_WORKER, inlineMaxBytes: 1024 }, framing);
  afterAll(() => parser.close());
  const stream = (b: Buffer, chunk = 64 * 1024) =>
    Readable.from(Array.from({ length: Math.ceil(b.length / chunk) }, (_, i) => b.subarray(i * chunk, (i + 1) * chunk)));

  it('a 12 MB conversation parsed on the worker equals JSON.parse, in order', async () => {
    const history = Array.from({ length: 3000 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `${i}:${'x'.repeat(4000)}`, n: i }));
    const text = JSON.stringify({ hook_event_name: 'pre_llm_call', extra: { conversation_history: history, user_message: 'hi' } });
    const value = await parser.read(stream(bytes(text)), String(Buffer.byteLength(text)));
    expect(JSON.stringify(value)).toBe(text);
    expect(parser.offloaded).toBeGreaterThan(0);
  });

  it("refusals and syntax errors come back from the worker; framing errors are fastify's", async () => {
    const many = bytes(`[${Array.from({ length: 300_000 }, () => '0').join(',')}]`);
    await expect(parser.read(stream(many), String(many.length))).rejects.toMatchObject({ code: 'too-many-nodes' });
    const bad = bytes(`{"a":"${'y'.repeat(5000)}"`);
    await expect(parser.read(stream(bad), String(bad.length))).rejects.toBeInstanceOf(SyntaxError);
    await expect(parser.read(stream(bytes('{}')), '999999999999')).rejects.toMatchObject({ code: 'FST_ERR_CTP_BODY_TOO_LARGE' });
    await expect(parser.read(stream(bytes('{"a":1}')), '3')).rejects.toThrow('bad length');
    // and it still parses after all that
    const ok = bytes(JSON.stringify({ a: 'z'.repeat(10_000) }));
    expect(await parser.read(stream(ok, 1000), String(ok.length))).toEqual({ a: 'z'.repeat(10_000) });
  });
});

describe('large bodies at once are bounded (memory)', () => {
  const body = (n: number) => bytes(JSON.stringify({ a: 'q'.repeat(n) }));
  /** a body whose bytes arrive only when `push` is called, then ends */
  const held = (b: Buffer) => {
    const s = new PassThrough();
    return { s, push: () => s.end(b) };
  };

  it('past the budget a large body is refused busy at once and counted; the ones in flight parse; the budget frees as they end', async () => {
    const p = new JsonBodyParser(
      { maxBytes: 100_000, maxNodes: 1000, maxDepth: 64, workerUrl: JSON_WORKER, inlineMaxBytes: 1024, largeBudgetBytes: 250_000 },
      framing,
    );
    try {
      const big = body(90_000);
      const [a, b, c] = [held(big), held(big), held(big)];
      const ra = p.read(a.s, String(big.length));
      const rb = p.read(b.s, String(big.length));
      // two 90 kB bodies hold 180 kB of 250 kB: a third is refused before any of it is read
      await expect(p.read(c.s, String(big.length))).rejects.toMatchObject({ code: 'busy' });
      expect(p.refusedBusy).toBe(1);
      a.push();
      b.push();
      expect(await ra).toEqual({ a: 'q'.repeat(90_000) });
      expect(await rb).toEqual({ a: 'q'.repeat(90_000) });
      // freed: three more in turn (and small bodies never count against it)
      for (let i = 0; i < 3; i++) expect(await p.read(Readable.from([big]), String(big.length))).toEqual({ a: 'q'.repeat(90_000) });
      expect(await p.read(Readable.from([bytes('{"s":1}')]), '7')).toEqual({ s: 1 });
      expect(p.refusedBusy).toBe(1);
    } finally {
      await p.close();
    }
  });

  it('a body of unknown length (chunked) holds what has arrived so far', async () => {
    const p = new JsonBodyParser(
      { maxBytes: 100_000, maxNodes: 1000, maxDepth: 64, workerUrl: JSON_WORKER, inlineMaxBytes: 1024, largeBudgetBytes: 100_000 },
      framing,
    );
    try {
      const big = body(90_000);
      const u1 = new PassThrough();
      const u2 = new PassThrough();
      const r1 = p.read(u1, undefined);
      u1.write(big.subarray(0, big.length - 1));
      const r2 = p.read(u2, undefined);
      // 2 kB more fits beside the first's 90 kB; 12 kB does not
      u2.write(big.subarray(0, 2000));
      u2.write(big.subarray(2000, 14_000));
      await expect(r2).rejects.toMatchObject({ code: 'busy' });
      expect(p.refusedBusy).toBe(1);
      u1.end(big.subarray(big.length - 1));
      expect(await r1).toEqual({ a: 'q'.repeat(90_000) });
      // and the budget is whole again
      expect(await p.read(Readable.from([big]), undefined)).toEqual({ a: 'q'.repeat(90_000) });
    } finally {
      await p.close();
    }
  });

  it('one body of AEP_MAX_BODY_BYTES always fits, whatever the budget', async () => {
    const p = new JsonBodyParser(
      { maxBytes: 100_000, maxNodes: 1000, maxDepth: 64, workerUrl: JSON_WORKER, inlineMaxBytes: 1024, largeBudgetBytes: 10 },
      framing,
    );
    try {
      const big = body(90_000);
      expect(await p.read(Readable.from([big]), String(big.length))).toEqual({ a: 'q'.repeat(90_000) });
      expect(p.refusedBusy).toBe(0);
    } finally {
      await p.close();
    }
  });
});
