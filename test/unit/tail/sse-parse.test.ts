// The SSE wire format tail consumes (AEP-0003 §3.3): events with and without `id:`, comments
// (`: ping`, `: replay-exhausted ...`), multi-line data, every line ending, chunks cut anywhere.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SseParser, type SseMessage } from '../../../src/tail/sse-parse.js';

function parseAll(chunks: string[], maxLine?: number) {
  const messages: SseMessage[] = [];
  const comments: string[] = [];
  let oversize = 0;
  const p = new SseParser({ message: (m) => messages.push(m), comment: (c) => comments.push(c), oversize: () => (oversize += 1) }, maxLine);
  for (const c of chunks) p.push(c);
  return { messages, comments, oversize, lastId: p.lastEventId };
}

const STREAM =
  ': replay-exhausted s_1 0:40\n\n' +
  'event: tool.completed\nid: s_1:0:41\ndata: {"type":"tool.completed","seq":41}\n\n' +
  ': ping\n\n' +
  'event: agent.heartbeat\ndata: {"type":"agent.heartbeat"}\n\n' +
  'event: run.started\r\nid: s:with:colons:2:7\r\ndata: {"a":\r\ndata: 1}\r\n\r\n';

describe('tail SSE parsing', () => {
  it('events, ids, comments and multi-line data', () => {
    const r = parseAll([STREAM]);
    expect(r.comments).toEqual(['replay-exhausted s_1 0:40', 'ping']);
    expect(r.messages).toEqual([
      { event: 'tool.completed', data: '{"type":"tool.completed","seq":41}', id: 's_1:0:41', hasId: true },
      // an event without id: keeps the last id in force, but did not carry one
      { event: 'agent.heartbeat', data: '{"type":"agent.heartbeat"}', id: 's_1:0:41', hasId: false },
      { event: 'run.started', data: '{"a":\n1}', id: 's:with:colons:2:7', hasId: true },
    ]);
    expect(JSON.parse(r.messages[2]!.data)).toEqual({ a: 1 });
    expect(r.lastId).toBe('s:with:colons:2:7');
  });

  it('the same messages whatever the chunking (CR, LF, CRLF split across chunks included)', () => {
    const whole = parseAll([STREAM.replace(/\r\n|\n/g, '\r')]);
    expect(whole.messages).toHaveLength(3);
    fc.assert(
      fc.property(fc.array(fc.nat(STREAM.length), { maxLength: 12 }), fc.constantFrom('\n', '\r', '\r\n'), (cuts, eol) => {
        const text = STREAM.replace(/\r\n|\n/g, eol);
        const at = [...new Set(cuts.map((c) => Math.min(c, text.length)))].sort((a, b) => a - b);
        const chunks = [0, ...at].map((s, i, a) => text.slice(s, a[i + 1] ?? text.length));
        const r = parseAll(chunks);
        expect(r.messages).toEqual(whole.messages);
        expect(r.comments).toEqual(whole.comments);
      }),
    );
  });

  it('a leading BOM, a space-less field, unknown fields, an id with NUL, and a message without data', () => {
    const r = parseAll(['\ufeffdata:x\nretry: 10\nfoo: bar\n\n', 'id: bad\u0000id\ndata: y\n\n', 'event: lonely\nid: z\n\n', 'data: w\n\n']);
    expect(r.messages.map((m) => [m.event, m.data, m.id])).toEqual([
      ['message', 'x', ''],
      ['message', 'y', ''],
      ['message', 'w', 'z'],
    ]);
  });

  it('an over-long line drops its message and the stream goes on', () => {
    const r = parseAll(['data: ' + 'a'.repeat(100), 'a'.repeat(100) + '\n\n', 'data: ok\n\n'], 64);
    expect(r.oversize).toBe(1);
    expect(r.messages.map((m) => m.data)).toEqual(['ok']);
  });
});
