// The page's stream parser (ui/sse.js), its token handling (ui/api.js) and its time-left wording (ui/format.js):
// the parts of the page's I/O that need no browser.
import { describe, expect, it } from 'vitest';
import { uiModule } from './ui-modules.js';

const { sseParser } = await uiModule('sse.js');
const { takeToken, authHeaders, TOKEN_KEY } = await uiModule('api.js');
const { timeLeft, usd, tokens } = await uiModule('format.js');

describe('SSE parsing', () => {
  const STREAM = ': ping\r\nevent: run.started\r\nid: s:1:2\r\ndata: {"a":1}\r\n\r\nevent: x\ndata: one\ndata: two\n\n: replayed\n\r\ndata: no-id\r\r\n';

  it('gives the same messages and comments however the text is cut (CRLF split across chunks included)', () => {
    const whole: unknown[] = [];
    sseParser(
      (m: unknown) => whole.push(m),
      (c: string) => whole.push(`comment ${c}`),
    )(STREAM);
    expect(whole).toEqual([
      'comment ping',
      { event: 'run.started', data: '{"a":1}', id: 's:1:2', hasId: true },
      { event: 'x', data: 'one\ntwo', id: 's:1:2', hasId: false },
      'comment replayed',
      { event: 'message', data: 'no-id', id: 's:1:2', hasId: false },
    ]);
    for (const size of [1, 2, 3, 7]) {
      const got: unknown[] = [];
      const push = sseParser(
        (m: unknown) => got.push(m),
        (c: string) => got.push(`comment ${c}`),
      );
      for (let i = 0; i < STREAM.length; i += size) push(STREAM.slice(i, i + size));
      expect(got).toEqual(whole);
    }
  });
});

describe('the token', () => {
  const fakes = (hash: string, stored?: string) => {
    const store = new Map<string, string>(stored !== undefined ? [[TOKEN_KEY, stored]] : []);
    const replaced: string[] = [];
    return {
      loc: { hash, pathname: '/ui', search: '' },
      storage: { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => void store.set(k, v) },
      hist: { replaceState: (_s: unknown, _t: string, url: string) => void replaced.push(url) },
      store,
      replaced,
    };
  };

  it('is taken from #token=, kept in sessionStorage under hermes-aep.token, and the fragment is removed', () => {
    const f = fakes('#token=abc%2Bdef');
    expect(takeToken(f.loc, f.storage, f.hist)).toBe('abc+def');
    expect(f.store.get(TOKEN_KEY)).toBe('abc+def');
    expect(f.replaced).toEqual(['/ui']);
    expect(authHeaders('abc+def')).toEqual({ authorization: 'Bearer abc+def' });
  });

  it('a reload (no fragment) keeps the stored one; none at all sends no Authorization header', () => {
    const f = fakes('', 'kept');
    expect(takeToken(f.loc, f.storage, f.hist)).toBe('kept');
    expect(f.replaced).toEqual([]);
    const g = fakes('');
    expect(takeToken(g.loc, g.storage, g.hist)).toBeUndefined();
    expect(authHeaders(undefined)).toEqual({});
  });
});

describe('wording', () => {
  it('time left rounds up and says expired; cost marks a sum that misses unpriced calls', () => {
    const t0 = Date.parse('2026-07-03T10:00:00Z');
    expect([timeLeft(t0 + 42_000, t0), timeLeft(t0 + 42_000, t0 + 41_001), timeLeft(t0, t0), timeLeft(undefined, t0)]).toEqual([
      '42s left',
      '1s left',
      'expired',
      '',
    ]);
    expect([usd(0.0033), usd(0.0033, 1), usd(0, 2), usd(12.5)]).toEqual(['$0.0033', '$0.0033+', 'cost unknown', '$12.50']);
    expect(tokens(2550, 70)).toBe('2.5k in / 70 out');
  });
});
