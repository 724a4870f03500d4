import { afterAll, describe, expect, it } from 'vitest';
import { PassThrough, Readable } from 'node:stream';
import { JsonBodyParser } from '../../../src/transport/json-body.js';
import { JSON_WORKER } from '../../support/paths.js';

// The body parser's worker thread runs the built module (dist/src/transport/json-worker.js): these cases live in the
// integration tier; the parser's in-process parts stay in test/unit/transport/json-body.test.ts.

const bytes = (s: string) => Buffer.from(s, 'utf8');

const framing = { tooLarge: () => Object.assign(new Error('too large'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE' }), badLength: () => new Error('bad length') };

describe('large values cross from the worker in parts', () => {
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
