import { readFileSync } from 'node:fs';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { annotatedTypes, annotationsFor, type AnnotationNode } from '../../../src/capture/annotations.js';
import { CAPTURE_LEVELS, captureRank, type CaptureLevel } from '../../../src/core/capture-levels.js';
import { applyCeiling, ceilingLine } from '../../../src/stream/ceiling.js';
import { wireOf } from '../../../src/aep/wire.js';

interface Case {
  name: string;
  ceiling: CaptureLevel;
  event: Record<string, unknown>;
  expect_capture: CaptureLevel;
  expect_data: Record<string, unknown> | null;
}
const corpus = JSON.parse(readFileSync(new URL('../../../fixtures/aep/downlevel/cases.json', import.meta.url), 'utf8')) as { cases: Case[] };
// a line written with spaces and a key order of its own: byte identity means these very bytes come out
const wireWithOddBytes = (ev: Record<string, unknown>) => wireOf(ev, ` ${JSON.stringify(ev, null, 0).replace('{', '{ ')}`, 'ingest');

describe('AEP-0003 §6.4 capture ceiling: the downlevel corpus through applyCeiling', () => {
  it('has cases', () => expect(corpus.cases.length).toBeGreaterThanOrEqual(12));
  for (const c of corpus.cases) {
    it(c.name, () => {
      const w = wireWithOddBytes(c.event);
      const line = applyCeiling(w, c.ceiling);
      const out = JSON.parse(line) as Record<string, unknown>;
      expect(out['capture']).toBe(c.expect_capture);
      if (c.expect_data === null) expect(Object.prototype.hasOwnProperty.call(out, 'data')).toBe(false);
      else expect(out['data']).toEqual(c.expect_data);
      const { capture: _a, data: _b, ...envIn } = c.event;
      const { capture: _c, data: _d, ...envOut } = out;
      expect(envOut).toEqual(envIn);
      const lowered = captureRank(c.ceiling) < captureRank((c.event['capture'] as CaptureLevel | undefined) ?? 'metadata');
      if (!lowered) expect(line).toBe(w.line);
      expect(line).not.toMatch(/[\r\n]/);
    });
  }
});

describe('AEP-0003 §6.4 ceiling mechanics', () => {
  const ev = {
    aep: '0.1',
    id: 'E1',
    type: 'tool.completed',
    time: '2026-07-03T10:00:00Z',
    source: 'aep://h/agent/a',
    agent: 'a',
    session: 's',
    seq: 1,
    capture: 'full',
    data: { status: 'success', result: 'VERBATIM' },
  };
  it('no ceiling, or a ceiling at or above the claim, delivers the stored bytes themselves (never up-levels)', () => {
    const w = wireWithOddBytes(ev);
    expect(applyCeiling(w)).toBe(w.line);
    expect(applyCeiling(w, 'full')).toBe(w.line);
    const meta = wireWithOddBytes({ ...ev, capture: 'metadata', data: { status: 'success' } });
    expect(applyCeiling(meta, 'full')).toBe(meta.line);
    expect(applyCeiling(meta, 'redacted')).toBe(meta.line);
  });
  it('a redacted ceiling on a full event lands on metadata (AEP-0001 §8.2e)', () => {
    const out = JSON.parse(applyCeiling(wireWithOddBytes(ev), 'redacted')) as Record<string, unknown>;
    expect(out['capture']).toBe('metadata');
    expect(JSON.stringify(out)).not.toContain('VERBATIM');
  });
  it('memoizes per (event, ceiling): one serialization shared by every subscriber', () => {
    const w = wireWithOddBytes(ev);
    const a = ceilingLine(w, 'metadata');
    expect(ceilingLine(w, 'metadata')).toBe(a);
    expect(ceilingLine(w, 'none')).not.toBe(a);
    expect(ceilingLine(w, 'full')).toBe(ceilingLine(w));
    expect(a.bytes).toBe(Buffer.byteLength(a.line));
    const other = wireWithOddBytes(ev);
    expect(ceilingLine(other, 'metadata')).not.toBe(a);
  });
});

/** A payload for `node` with a unique marker in every leaf, and each marker's effective minimum level. */
function plant(node: AnnotationNode, pick: () => boolean, next: () => number, floor: number, markers: Map<string, number>): unknown {
  const level = Math.max(floor, captureRank(node.capture));
  if (node.properties) {
    const out: Record<string, unknown> = {};
    for (const [k, child] of Object.entries(node.properties)) if (pick()) out[k] = plant(child, pick, next, level, markers);
    return out;
  }
  if (node.items) return [plant(node.items, pick, next, level, markers), plant(node.items, pick, next, level, markers)];
  const m = `MK${next()}QZ`;
  markers.set(m, level);
  return `${m} text`;
}

describe('AEP-0003 §6.4 planted markers (property)', () => {
  const types = annotatedTypes().filter((t) => annotationsFor(t)?.properties !== undefined);
  it('no byte of a field above the ceiling is ever delivered', () => {
    expect(types.length).toBeGreaterThan(10);
    fc.assert(
      fc.property(
        fc.constantFrom(...types),
        fc.constantFrom(...CAPTURE_LEVELS),
        fc.constantFrom(...CAPTURE_LEVELS),
        fc.infiniteStream(fc.boolean()),
        (type, claim, ceiling, coins) => {
          const markers = new Map<string, number>();
          let n = 0;
          const data = plant(
            annotationsFor(type)!,
            () => coins.next().value as boolean,
            () => n++,
            0,
            markers,
          );
          const ev = {
            aep: '0.1',
            id: 'P',
            type,
            time: '2026-07-03T10:00:00Z',
            source: 'aep://h/agent/a',
            agent: 'a',
            session: 's',
            seq: 0,
            capture: claim,
            data,
          };
          const w = wireOf(ev, JSON.stringify(ev), 'ingest');
          const line = applyCeiling(w, ceiling);
          const out = JSON.parse(line) as { capture: CaptureLevel };
          if (captureRank(ceiling) >= captureRank(claim)) {
            expect(line).toBe(w.line);
            return;
          }
          const target = ceiling === 'redacted' ? 'metadata' : ceiling;
          expect(out.capture).toBe(target);
          for (const [m, level] of markers) if (level > captureRank(target)) expect(line).not.toContain(m);
        },
      ),
      { numRuns: 600 },
    );
  });
});
