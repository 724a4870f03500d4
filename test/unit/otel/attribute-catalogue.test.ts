import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ATTRIBUTE_CATALOGUE, EVENT_ATTR, LINK_ATTR, RESOURCE_ATTR, SPAN_ATTR, type AttributePlace } from '../../../src/otel/attribute-catalogue.js';
import { CONTENT_ON, mirroredDaemon } from '../../support/otel-harness.js';
import { ROOT } from '../../support/paths.js';
import { scriptedSession } from '../../support/scripted-session.js';

const OTEL = path.join(ROOT, 'src', 'otel');
const CATALOGUE_FILE = 'attribute-catalogue.ts';

/** docs/reference.md's Span attributes table: attribute name → the "on" cell, in row order. */
function readmeRows(): [string, string][] {
  const doc = readFileSync(path.join(ROOT, 'docs', 'reference.md'), 'utf8');
  const section = doc.slice(doc.indexOf('\n## Span attributes'), doc.indexOf('\n## ', doc.indexOf('\n## Span attributes') + 1));
  expect(section, 'docs/reference.md has the attribute table').toContain('| attribute | on | what |');
  const rows: [string, string][] = [];
  for (const line of section.split('\n')) {
    const m = /^\| `([^`]+)` \| ([^|]+) \|/.exec(line);
    if (m) rows.push([m[1]!, m[2]!.trim()]);
  }
  return rows;
}

/** Where the table's "on" cell says an attribute goes. */
const placeOf = (on: string): AttributePlace => (on === 'span event' ? 'event' : on === 'link' ? 'link' : on === 'resource' ? 'resource' : 'span');

/** The exporter's sources, but the catalogue. */
function sources(): [string, string][] {
  return readdirSync(OTEL)
    .filter((f) => f.endsWith('.ts') && f !== CATALOGUE_FILE)
    .map((f) => [f, readFileSync(path.join(OTEL, f), 'utf8')]);
}

describe('the span attribute catalogue', () => {
  it('the docs/reference.md table lists exactly the catalogue, each name once, in its place', () => {
    const rows = readmeRows();
    const names = rows.map(([n]) => n);
    expect(new Set(names).size, 'a name listed twice').toBe(names.length);
    expect([...names].sort()).toEqual([...ATTRIBUTE_CATALOGUE.keys()].sort());
    for (const [name, on] of rows) expect(placeOf(on), name).toBe(ATTRIBUTE_CATALOGUE.get(name));
  });

  it('no attribute name is spelled in the exporter outside the catalogue', () => {
    // a key in an object literal or an index: 'aep.x': …, ['aep.x']
    const spelled = /['"`]((?:aep|gen_ai|hermes|error|service|otel)\.[A-Za-z0-9_.]+)['"`]\s*[:\]]/g;
    const found: string[] = [];
    for (const [file, text] of sources()) for (const m of text.matchAll(spelled)) found.push(`${file}: ${m[1]}`);
    expect(found).toEqual([]);
  });

  it('every catalogue entry is set somewhere in the exporter', () => {
    const code = sources()
      .map(([, t]) => t)
      .join('\n');
    const groups = { SPAN_ATTR, EVENT_ATTR, LINK_ATTR, RESOURCE_ATTR };
    const unused: string[] = [];
    for (const [group, entries] of Object.entries(groups)) {
      for (const key of Object.keys(entries)) {
        // imported under its own name or an alias (`SPAN_ATTR as A`)
        const alias = [...code.matchAll(new RegExp(`\\b${group} as (\\w+)`, 'g'))].map((m) => m[1]);
        const used = [group, ...alias].some((g) => new RegExp(`\\b${g}\\.${key}\\b`).test(code));
        if (!used) unused.push(`${group}.${key}`);
      }
    }
    expect(unused).toEqual([]);
  });

  it('the spans of the scripted session, content on, carry only catalogue names, each in its place', async () => {
    const h = await mirroredDaemon(CONTENT_ON);
    try {
      await h.feed(scriptedSession().envelopes);
      const spans = h.spans();
      expect(spans.length).toBeGreaterThan(5);
      const seen = new Map<string, AttributePlace>();
      for (const s of spans) {
        for (const k of Object.keys(s.attributes)) seen.set(k, 'span');
        for (const e of s.events) for (const k of Object.keys(e.attributes ?? {})) seen.set(k, 'event');
        for (const l of s.links) for (const k of Object.keys(l.attributes ?? {})) seen.set(k, 'link');
        for (const k of Object.keys(s.resource.attributes)) seen.set(k, 'resource');
      }
      // content did ride (the run is not vacuous about aep.data)
      expect(seen.get(EVENT_ATTR.data)).toBe('event');
      const wrong = [...seen].filter(([k, place]) => ATTRIBUTE_CATALOGUE.get(k) !== place);
      expect(wrong).toEqual([]);
    } finally {
      await h.app.close();
      await h.mirror.shutdown();
    }
  });
});
