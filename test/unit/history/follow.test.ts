// The JSONL fallback (AEP-0003 §3.1): tail reads the history files and follows appended
// lines, whole lines only, new files from their start, a replaced file again.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HistoryFollower } from '../../../src/history/follow.js';
import { tempDir, waitFor } from '../../support/processes.js';

const stops: AbortController[] = [];
afterEach(() => {
  for (const s of stops.splice(0)) s.abort();
});

function follow(root: string, startAt: 'start' | 'end', o: { rescanMs?: number; follow?: boolean } = {}) {
  const lines: { line: string; file: string }[] = [];
  let ready = false;
  const stop = new AbortController();
  stops.push(stop);
  const done = new HistoryFollower({
    root,
    startAt: () => startAt,
    follow: o.follow ?? true,
    signal: stop.signal,
    rescanMs: o.rescanMs ?? 60_000,
    onLine: (line, file) => lines.push({ line, file: path.relative(root, file) }),
    onReady: () => (ready = true),
  }).run();
  return { lines, stop, done, texts: () => lines.map((l) => l.line), ready: () => waitFor('the follower', () => ready || undefined) };
}

describe('tail JSONL follower', () => {
  it('without follow: every file from its start, oldest modified first, then it returns', async () => {
    const root = tempDir();
    mkdirSync(path.join(root, 'hermes'));
    writeFileSync(path.join(root, 'hermes', 'a.jsonl'), '{"n":1}\n{"n":2}\n');
    mkdirSync(path.join(root, 'ingest', 'cc'), { recursive: true });
    writeFileSync(path.join(root, 'ingest', 'cc', 'b.jsonl'), '{"n":3}\n\n{"n":4}\n');
    writeFileSync(path.join(root, 'notes.txt'), 'not a history file\n');
    const f = follow(root, 'start', { follow: false });
    await f.done;
    expect(f.texts().sort()).toEqual(['{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}']);
    expect(f.lines.find((l) => l.line === '{"n":4}')!.file).toBe(path.join('ingest', 'cc', 'b.jsonl'));
  });

  it('follows appended lines (fs.watch, no re-scan needed), whole lines only, a new file from its start', async () => {
    const root = tempDir();
    mkdirSync(path.join(root, 'hermes'));
    const a = path.join(root, 'hermes', 'a.jsonl');
    writeFileSync(a, '{"old":1}\n{"old":2}\n');
    const f = follow(root, 'end');
    await f.ready();
    appendFileSync(a, '{"new":1}\n');
    await waitFor('the appended line', () => f.texts().includes('{"new":1}') || undefined);
    // a line written in two parts is handed out once, whole
    appendFileSync(a, '{"torn":');
    // a later write elsewhere: once it is seen, a sweep has been past the half line too
    writeFileSync(path.join(root, 'hermes', 'm.jsonl'), '{"marker":1}\n');
    await waitFor('the marker', () => f.texts().includes('{"marker":1}') || undefined);
    expect(f.texts().some((t) => t.includes('torn'))).toBe(false);
    appendFileSync(a, '1}\n');
    await waitFor('the completed line', () => f.texts().includes('{"torn":1}') || undefined);
    writeFileSync(path.join(root, 'hermes', 'b.jsonl'), '{"b":1}\n{"b":2}\n');
    await waitFor('the new file', () => f.texts().includes('{"b":2}') || undefined);
    expect(f.texts()).toEqual(['{"new":1}', '{"marker":1}', '{"torn":1}', '{"b":1}', '{"b":2}']);
  });

  it('a file begun at its end mid-line starts at the next whole line', async () => {
    const root = tempDir();
    const a = path.join(root, 'a.jsonl');
    writeFileSync(a, '{"old":1}\n{"half":');
    const f = follow(root, 'end');
    await f.ready();
    appendFileSync(a, '2}\n{"next":3}\n');
    await waitFor('the next line', () => f.texts().includes('{"next":3}') || undefined);
    expect(f.texts()).toEqual(['{"next":3}']);
  });

  it('a root that does not exist yet is picked up by the re-scan; a replaced (shorter) file is read again', async () => {
    const root = path.join(tempDir(), 'logs');
    const f = follow(root, 'end', { rescanMs: 50 });
    await f.ready();
    mkdirSync(path.join(root, 'hermes'), { recursive: true });
    const a = path.join(root, 'hermes', 's.jsonl');
    writeFileSync(a, '{"first":1}\n{"first":2}\n');
    await waitFor('the file under the late root', () => f.texts().includes('{"first":2}') || undefined);
    writeFileSync(a, '{"r":1}\n');
    await waitFor('the replaced file', () => f.texts().includes('{"r":1}') || undefined);
    expect(f.texts()).toEqual(['{"first":1}', '{"first":2}', '{"r":1}']);
  });

  it('stops when the signal fires', async () => {
    const root = tempDir();
    const f = follow(root, 'end');
    f.stop.abort();
    await expect(f.done).resolves.toBeUndefined();
  });
});
