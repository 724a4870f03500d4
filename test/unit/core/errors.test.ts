import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERRORS, errorBody, httpRefusal, isErrorCode } from '../../../src/core/errors.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const CODES = Object.keys(ERRORS);

/** docs/reference.md's "Error codes" section: the one table of every code. */
function errorTable(): string {
  const doc = readFileSync(path.join(ROOT, 'docs', 'reference.md'), 'utf8');
  const start = doc.indexOf('\n## Error codes');
  expect(start, 'docs/reference.md has an "Error codes" section').toBeGreaterThan(-1);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end === -1 ? undefined : end);
}

/** Every TypeScript source under src/, as [path relative to the repo, text]. */
function sources(dir = path.join(ROOT, 'src')): [string, string][] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e): [string, string][] => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.c?ts$/.test(e.name) ? [[path.relative(ROOT, p), readFileSync(p, 'utf8')]] : [];
  });
}

/**
 * The error codes a source answers with as literals: the code-shaped `error` member of a body written out
 * (`error: 'x'`, `"error":"x"`; a sentence there is a local result's text, not a code), and the first argument of what builds a body or a frame
 * (`errorBody('x'`, `httpRefusal('x'`, `errorStatus('x'`, `errorFrame('x'`, a local `refuse('x'`), and a
 * refusal's `code: 'x'` in the stream's hello and hub.
 */
const ANSWERED = [
  /\berror:\s*'([a-z][a-z0-9_-]*)'/g,
  /"error"\s*:\s*"([a-z][a-z0-9_-]*)"/g,
  /\b(?:errorBody|httpRefusal|errorStatus|errorFrame)\(\s*'([^']*)'/g,
  /\brefuse\(\s*'([a-z][a-z-]*)'\s*,/g,
];
const REFUSAL_CODE = /\bcode:\s*'([a-z]+(?:-[a-z]+)+)'/g;

function answeredCodes(text: string): string[] {
  const out = ANSWERED.flatMap((re) => [...text.matchAll(re)].map((m) => m[1]!));
  return [...out, ...[...text.matchAll(REFUSAL_CODE)].map((m) => m[1]!)];
}

describe('the error catalogue (src/core/errors.ts)', () => {
  it('one spelling: every code is lower-case words joined by hyphens (the AEP-0003 house style)', () => {
    expect(CODES.filter((c) => !/^[a-z]+(?:-[a-z]+)*$/.test(c))).toEqual([]);
  });

  it('every code has a status (an HTTP error status, or a frame) and one non-empty message', () => {
    for (const [code, spec] of Object.entries(ERRORS)) {
      expect([code, spec.status === 'frame' || (spec.status >= 400 && spec.status <= 599)]).toEqual([code, true]);
      expect([code, spec.message.length > 0, spec.where.length > 0]).toEqual([code, true, true]);
    }
  });

  it('the spec-named codes keep their spelling (AEP-0003 §3.2, §4, §6.5; AEP-0004 §4)', () => {
    for (const c of ['invalid-event', 'invalid-filter', 'limit-exceeded', 'unauthorized', 'version-unsupported', 'no-route']) expect(isErrorCode(c)).toBe(true);
  });

  it('a body is {error, detail}: the catalogue message unless a specific detail is given, plus what the route adds', () => {
    expect(errorBody('too-large')).toEqual({ error: 'too-large', detail: 'body exceeds AEP_MAX_BODY_BYTES' });
    expect(errorBody('invalid-event', 'line 2: bad')).toEqual({ error: 'invalid-event', detail: 'line 2: bad' });
    expect(httpRefusal('unavailable', undefined, { reason: 'disk' })).toEqual({
      status: 503,
      body: { error: 'unavailable', detail: ERRORS.unavailable.message, reason: 'disk' },
    });
  });

  it('every catalogue code is documented in docs/reference.md (a row of its Error codes table)', () => {
    const doc = errorTable();
    const rows = new Set([...doc.matchAll(/^\|\s*`([^`]+)`\s*\|/gm)].map((m) => m[1]!));
    expect(CODES.filter((c) => !rows.has(c))).toEqual([]);
  });

  it('every documented code is in the catalogue (no stale row)', () => {
    const doc = errorTable();
    const rows = [...doc.matchAll(/^\|\s*`([^`]+)`\s*\|/gm)].map((m) => m[1]!);
    expect(rows.filter((c) => !isErrorCode(c))).toEqual([]);
  });

  it('no source under src/ answers an error code that is not in the catalogue', () => {
    const stray = sources()
      .filter(([file]) => file !== path.join('src', 'core', 'errors.ts'))
      .flatMap(([file, text]) => answeredCodes(text).map((code) => ({ file, code })))
      .filter(({ code }) => !isErrorCode(code));
    expect(stray).toEqual([]);
  });

  it('the scan finds what it looks for (so an empty result above means something)', () => {
    expect(answeredCodes(`reply.send({ error: 'too_large', message: 'x' }); errorFrame('nope', 'd'); refuse('gone-away', 'd')`)).toEqual([
      'too_large',
      'nope',
      'gone-away',
    ]);
    const all = sources().flatMap(([, text]) => answeredCodes(text));
    // the daemon's routes and frames answer through the catalogue: a good part of it is found in use
    expect(new Set(all.filter(isErrorCode)).size).toBeGreaterThan(CODES.length / 2);
  });
});
