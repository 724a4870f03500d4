import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkDelivery, parseDeliveryTime, withinWindow } from '../../../../src/transport/webhook/delivery.js';

/** The timestamp as Hermes writes it: Python's isoformat() of an aware UTC datetime, `+00:00` as `Z` (microseconds unless 0). */
function pythonIso(ms: number, micros: number): string {
  const d = new Date(ms);
  const base = d.toISOString().slice(0, 19);
  const us = (d.getUTCMilliseconds() * 1000 + micros) % 1_000_000;
  return us === 0 ? `${base}Z` : `${base}.${String(us).padStart(6, '0')}Z`;
}

describe('the delivery timestamp', () => {
  it('reads what Python writes, with or without a fraction, to the millisecond (fast-check)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.integer({ min: 0, max: 999 }), (ms, micros) => {
        expect(parseDeliveryTime(pythonIso(ms, micros))).toBe(ms);
      }),
    );
    expect(parseDeliveryTime('2026-07-22T14:00:00Z')).toBe(Date.UTC(2026, 6, 22, 14));
    expect(parseDeliveryTime('2026-07-22T14:00:00.123456Z')).toBe(Date.UTC(2026, 6, 22, 14, 0, 0, 123));
  });

  it.each(['2026-07-22T14:00:00', '2026-07-22T14:00:00+00:00', '2026-02-31T00:00:00Z', '2026-07-22T24:00:00Z', '2026-07-22 14:00:00Z', '', 'yesterday'])(
    '%j is no timestamp',
    (s) => expect(parseDeliveryTime(s)).toBeUndefined(),
  );

  it('the window holds both ways, inclusive', () => {
    expect([withinWindow(0, 300_000, 300_000), withinWindow(0, 300_001, 300_000), withinWindow(300_001, 0, 300_000)]).toEqual([true, false, false]);
  });
});

describe('a verified body read as a delivery', () => {
  const now = Date.UTC(2026, 8, 14, 12);
  const body = (o: Record<string, unknown> = {}) => ({
    hook_event_name: 'post_tool_call',
    profile: 'default',
    tool_name: 't',
    session_id: 's',
    extra: {},
    delivery_id: 'ab'.repeat(16),
    timestamp: pythonIso(now - 1000, 5),
    ...o,
  });
  const headers = { 'x-hermes-event': 'post_tool_call', 'x-hermes-delivery': 'ab'.repeat(16) };

  it('hands on the envelope without delivery_id and timestamp, profile kept, order kept', () => {
    const r = checkDelivery(body(), headers, now, 300_000);
    expect(r.ok && Object.keys(r.envelope)).toEqual(['hook_event_name', 'profile', 'tool_name', 'session_id', 'extra']);
  });

  it('refuses unsigned headers that differ from the body, a bad id or time, and a time outside the window', () => {
    const why = (b: unknown, h: Record<string, string> = headers) => {
      const r = checkDelivery(b, h, now, 300_000);
      return r.ok ? 'ok' : r.why;
    };
    expect(why(body(), { ...headers, 'x-hermes-event': 'pre_tool_call' })).toBe('delivery-mismatch');
    expect(why(body(), { 'x-hermes-event': 'post_tool_call' })).toBe('delivery-mismatch');
    expect(why(body({ delivery_id: 'a b' }))).toBe('invalid-delivery');
    expect(why(body({ delivery_id: undefined }))).toBe('invalid-delivery');
    expect(why(body({ timestamp: 1 }))).toBe('invalid-delivery');
    expect(why([body()])).toBe('invalid-delivery');
    expect(why(body({ timestamp: pythonIso(now - 300_001, 0) }))).toBe('stale-delivery');
    expect(why(body({ timestamp: pythonIso(now + 300_001, 0) }))).toBe('stale-delivery');
    expect(why(body({ timestamp: pythonIso(now - 300_000, 0) }))).toBe('ok');
  });
});
