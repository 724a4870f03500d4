import { existsSync, readdirSync, readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { annotatedTypes, annotationsFor } from '../../../src/capture/annotations.js';
import { downlevel, synthesizePrompt } from '../../../src/capture/downlevel.js';
import type { CaptureLevel } from '../../../src/core/capture-levels.js';
import type { CaptureEvent } from '../../../src/capture/types.js';

type DownlevelCase = {
  name: string;
  ceiling: CaptureLevel;
  event: CaptureEvent;
  expect_capture: CaptureLevel;
  expect_data: Record<string, unknown> | null;
};

const corpus = JSON.parse(readFileSync(new URL('../../../fixtures/aep/downlevel/cases.json', import.meta.url), 'utf8')) as { cases: DownlevelCase[] };

describe('downlevel corpus', () => {
  it('has cases', () => {
    expect(corpus.cases.length).toBeGreaterThan(0);
  });
  for (const c of corpus.cases) {
    it(c.name, () => {
      const before = structuredClone(c.event);
      const out = downlevel(c.event, c.ceiling);
      expect(out.capture).toBe(c.expect_capture);
      if (c.expect_data === null) {
        expect(Object.prototype.hasOwnProperty.call(out, 'data')).toBe(false);
      } else {
        expect(out.data).toEqual(c.expect_data);
      }
      // Envelope members other than capture/data ride unchanged.
      const { capture: _c1, data: _d1, ...envIn } = c.event;
      const { capture: _c2, data: _d2, ...envOut } = out;
      expect(envOut).toEqual(envIn);
      // Pure: the input is never mutated, the output shares no structure with it.
      expect(c.event).toEqual(before);
      expect(out).not.toBe(c.event);
      if (out.data !== undefined && c.event.data !== undefined) expect(out.data).not.toBe(c.event.data);
      // Down-leveling again to the same ceiling is a no-op.
      expect(downlevel(out, c.ceiling)).toEqual(out);
    });
  }
});

describe('downlevel beyond the corpus', () => {
  const base = {
    aep: '0.1',
    id: 'X1',
    time: '2026-07-03T10:00:00Z',
    source: 'aep://h/agent/a',
    agent: 'a',
    session: 's1',
  };

  it('treats a missing capture as metadata', () => {
    const ev: CaptureEvent = { ...base, type: 'tool.failed', data: { tool: { name: 'Bash' }, error: { message: 'm' } } };
    expect(downlevel(ev, 'metadata')).toEqual(ev);
    expect(downlevel(ev, 'none')).toEqual({ ...base, type: 'tool.failed', capture: 'none' });
  });

  it('full -> full and redacted -> full pass unchanged', () => {
    const ev: CaptureEvent = { ...base, type: 'tool.completed', capture: 'full', data: { tool: { name: 'Bash' }, result: 'r' } };
    expect(downlevel(ev, 'full')).toEqual(ev);
    const red: CaptureEvent = { ...ev, capture: 'redacted', data: { tool: { name: 'Bash' }, result_redacted: 'r' } };
    expect(downlevel(red, 'full')).toEqual(red);
  });

  it('full -> metadata on attention.requested synthesizes without a subject and uses index placeholders', () => {
    const ev: CaptureEvent = {
      ...base,
      type: 'attention.requested',
      capture: 'full',
      data: {
        kind: 'input',
        prompt: 'Pick the secret project name',
        options: [{ label: 'Project Falcon' }, { id: 'b', label: 'Project Owl' }],
        context: { transcript: 'verbatim' },
      },
    };
    expect(downlevel(ev, 'metadata').data).toEqual({
      kind: 'input',
      prompt: 'a requests input',
      options: [{ label: '1' }, { id: 'b', label: 'b' }],
    });
  });

  it('never lets a free-text kind into the synthesized prompt', () => {
    expect(synthesizePrompt('a', 'please approve rm -rf', 'S')).toBe('a requests other: S');
    expect(synthesizePrompt('a', 'permission', 'Bash')).toBe('a requests permission: Bash');
  });

  it('keeps unannotated members of an annotated type (AEP-0002 §5.1 rule 4)', () => {
    const ev: CaptureEvent = {
      ...base,
      type: 'run.finished',
      capture: 'redacted',
      data: { duration_ms: 5, summary: 'text', usage: { 'gen_ai.usage.input_tokens': 3 }, extra: 1 },
    };
    expect(downlevel(ev, 'metadata').data).toEqual({ duration_ms: 5, usage: { 'gen_ai.usage.input_tokens': 3 }, extra: 1 });
  });

  it('drops non-structural answer.values entries, and values that are not an object', () => {
    const ev: CaptureEvent = {
      ...base,
      type: 'attention.answered',
      capture: 'full',
      data: { answer: { values: { n: 1, b: false, s: 'x', o: { y: 1 }, nan: Number.NaN } } },
    };
    expect(downlevel(ev, 'metadata').data).toEqual({ answer: { values: { n: 1, b: false } } });
    const odd: CaptureEvent = { ...ev, data: { answer: { option: '1', values: 'free text' } } };
    expect(downlevel(odd, 'metadata').data).toEqual({ answer: { option: '1' } });
  });

  it('fails closed on a malformed ceiling and treats a malformed claim as full', () => {
    const ev: CaptureEvent = { ...base, type: 'tool.failed', capture: 'redacted', data: { tool: { name: 'B' }, error: {} } };
    const out = downlevel(ev, 'bogus' as CaptureLevel);
    expect(out.capture).toBe('none');
    expect(out.data).toBeUndefined();
    const weird = { ...ev, capture: 'verbatim' } as unknown as CaptureEvent;
    expect(downlevel(weird, 'redacted').capture).toBe('metadata');
  });
});

describe('annotations', () => {
  it('loads every core payload schema', () => {
    const files = readdirSync(new URL('../../../schemas/types/', import.meta.url)).filter((f) => f.endsWith('.schema.json'));
    expect(files.length).toBeGreaterThan(0);
    const types = annotatedTypes();
    for (const f of files) expect(types).toContain(f.slice(0, -'.schema.json'.length));
  });

  it('loads the Hermes vendor-extension schemas beside the core ones', () => {
    const dir = new URL('../../../schemas/x-hermes/', import.meta.url);
    const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.schema.json')) : [];
    const types = annotatedTypes();
    for (const f of files) expect(types).toContain(f.slice(0, -'.schema.json'.length));
  });

  it('gates x.hermes.api.error like a core type, dropping undeclared members of a closed schema', () => {
    const ev: CaptureEvent = {
      aep: '0.1',
      id: 'H1',
      type: 'x.hermes.api.error',
      time: '2026-07-03T10:00:00Z',
      source: 'aep://h/agent/hermes',
      agent: 'hermes',
      capture: 'redacted',
      data: { status_code: 429, retry_count: 3, reason: 'rate_limited', error_message: 'quota for jane', stray: 'x' },
    };
    expect(annotationsFor('x.hermes.api.error')?.properties?.['error_message']?.capture).toBe('redacted');
    expect(downlevel(ev, 'metadata').data).toEqual({ status_code: 429, retry_count: 3, reason: 'rate_limited' });
  });

  it('builds nested property and item annotations', () => {
    const node = annotationsFor('attention.requested');
    expect(node?.properties?.['prompt']?.capture).toBe('metadata');
    expect(node?.properties?.['context']?.capture).toBe('full');
    expect(node?.properties?.['fields']?.items?.properties?.['choices']?.items?.properties?.['label']?.capture).toBe('metadata');
    expect(annotationsFor('tool.failed')?.properties?.['error']?.properties?.['message']?.capture).toBe('redacted');
    expect(annotationsFor('x.acme.session.custom_blob')).toBeUndefined();
  });
});
