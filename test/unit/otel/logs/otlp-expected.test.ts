import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportedData, parseTraceparent, toLogRecord, unixNanos, type BridgeEvent } from '../../../../src/otel/logs/log-record.js';
import { ROOT } from '../../../support/paths.js';

const golden: BridgeEvent[] = readFileSync(path.join(ROOT, 'fixtures/aep/golden/golden.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as BridgeEvent);

/** The pins, their integers above 2^53 read exactly (from the source text), as the projection gives them: bigint nanoseconds. */
const pins = JSON.parse(
  readFileSync(path.join(ROOT, 'fixtures/aep/otlp/otlp-expected.json'), 'utf8'),
  function (this: unknown, key, value, ctx?: { source?: string }) {
    return key === 'time_unix_nano' && ctx?.source !== undefined ? BigInt(ctx.source) : value;
  },
) as Record<string, Record<string, unknown>>;

describe('the OTLP LogRecord projection (fixtures/aep/otlp/otlp-expected.json, AEP-0005 §3)', () => {
  const cases = Object.keys(pins);

  it('covers the four pinned golden events, which exist in the corpus', () => {
    expect(cases).toEqual(['3', '13', '15', '24']);
    for (const k of cases) expect(golden[Number(k)]).toBeDefined();
  });

  it.each(cases)('golden event %s projects to its pin exactly (default max_capture metadata)', (k) => {
    const record = toLogRecord(golden[Number(k)]!, 'metadata');
    // deep, strict: a missing or extra field or attribute, or an undefined member, fails
    expect(record).toStrictEqual(pins[k]);
    expect(typeof record.time_unix_nano).toBe('bigint');
  });

  it('reads the nanoseconds exactly, where float arithmetic would not (.310)', () => {
    expect(unixNanos('2026-07-03T10:15:13.310Z')).toBe(1783073713310000000n);
    expect(unixNanos('2026-07-03T12:15:13.310000001+02:00')).toBe(1783073713310000001n);
    expect(unixNanos('0099-01-01T00:00:00Z')).toBe(BigInt(Date.parse('0099-01-01T00:00:00Z')) * 1_000_000n);
    expect(unixNanos('2026-02-30T00:00:00Z')).toBeUndefined();
    expect(unixNanos('yesterday')).toBeUndefined();
  });

  it('an unreadable time is OTLP "unknown" (0), never the clock', () => {
    expect(toLogRecord({ ...golden[3]!, time: 'not a time' }, 'metadata').time_unix_nano).toBe(0n);
  });

  it('severity: the §3.4 table, and info when the event has none', () => {
    const rows = { debug: ['DEBUG', 5], info: ['INFO', 9], notice: ['INFO2', 10], warning: ['WARN', 13], error: ['ERROR', 17], critical: ['FATAL', 21] };
    for (const [severity, [text, number]] of Object.entries(rows)) {
      const r = toLogRecord({ ...golden[3]!, severity }, 'metadata');
      expect([r.severity_text, r.severity_number]).toEqual([text, number]);
    }
    const { severity: _, ...bare } = golden[13]!;
    expect(toLogRecord(bare, 'metadata')).toMatchObject({ severity_text: 'INFO', severity_number: 9 });
  });

  it('trace fields only from a valid traceparent', () => {
    expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00')).toEqual({
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      span_id: '00f067aa0ba902b7',
      flags: 0,
    });
    for (const bad of [
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
      42,
    ]) {
      const r = toLogRecord({ ...golden[3]!, traceparent: bad as string }, 'metadata');
      expect(r).not.toHaveProperty('trace_id');
      expect(r).not.toHaveProperty('span_id');
      expect(r).not.toHaveProperty('flags');
    }
  });

  describe('capture enforcement (§3.3)', () => {
    const failed = golden[15]!; // capture redacted, carrying the error message
    it('an event above max_capture exports envelope attributes only: no body, no gen_ai attribute', () => {
      const completedFull = { ...golden[3]!, capture: 'full' as const };
      const r = toLogRecord(completedFull, 'redacted');
      expect(r).not.toHaveProperty('body');
      expect(Object.keys(r.attributes).filter((k) => !k.startsWith('aep.'))).toEqual([]);
      expect(r.attributes['aep.capture']).toBe('full');
    });

    it('at or below max_capture the data is exported as the event carries it', () => {
      expect(toLogRecord(failed, 'redacted').body).toEqual(failed.data);
      expect(toLogRecord(failed, 'full').body).toEqual(failed.data);
      expect(exportedData(failed, 'metadata')).toBeUndefined();
    });

    it('max_capture none: no event exports a body', () => {
      for (const ev of golden) {
        const r = toLogRecord(ev, 'none');
        expect(r.body, ev.id).toBeUndefined();
        expect(
          Object.keys(r.attributes).filter((k) => k.startsWith('gen_ai.')),
          ev.id,
        ).toEqual([]);
      }
    });

    it('a malformed claim is read as full, a malformed ceiling as none (fail closed)', () => {
      expect(toLogRecord({ ...failed, capture: 'everything' as never }, 'redacted')).not.toHaveProperty('body');
      expect(toLogRecord(golden[3]!, 'bogus' as never)).not.toHaveProperty('body');
    });

    it('never leaks an above-ceiling string anywhere in the record', () => {
      const text = JSON.stringify(toLogRecord(failed, 'metadata'), (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
      expect(text).not.toContain('ENOSPC');
      expect(text).not.toContain('io_error');
    });
  });

  it('every golden event projects without throwing, with its event name and identity', () => {
    for (const ev of golden) {
      const r = toLogRecord(ev, 'full');
      expect(r.event_name).toBe(`dev.aep.${ev.type}`);
      expect(r.attributes['aep.event_id']).toBe(ev.id);
      expect(r.resource).toEqual({ 'service.name': ev.agent });
    }
  });
});
