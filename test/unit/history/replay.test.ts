import { describe, expect, it } from 'vitest';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { replayRecentHistory } from '../../../src/history/replay.js';
import { tempDir } from '../../support/processes.js';

const line = (i: number, session = 's') =>
  JSON.stringify({ aep: '0.1', id: `e${i}`, type: 'tool.requested', session, time: new Date(i).toISOString(), data: {} });

describe('log replay', () => {
  it('reads recent logs in order, skips torn and foreign lines, ignores logs older than the window', async () => {
    const root = tempDir();
    const dir = path.join(root, 'hermes');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'a.jsonl'), [line(1), '{"torn', line(2), '{"not":"an event"}', ''].join('\n'));
    writeFileSync(path.join(dir, 'old.jsonl'), `${line(3, 'old')}\n`);
    const old = Date.now() / 1000 - 7200;
    utimesSync(path.join(dir, 'old.jsonl'), old, old);
    const seen: string[] = [];
    const counts = await replayRecentHistory(root, 3_600_000, Date.now(), (e) => seen.push(e.id));
    expect(seen).toEqual(['e1', 'e2']);
    expect(counts).toMatchObject({ files: 1, events: 2, skippedLines: 2, tailOnly: 0 });
  });

  it('a log longer than the budget is read from its tail, starting at a whole line', async () => {
    const root = tempDir();
    mkdirSync(path.join(root, 'hermes'));
    const lines = Array.from({ length: 1000 }, (_, i) => line(i));
    writeFileSync(path.join(root, 'hermes', 'big.jsonl'), `${lines.join('\n')}\n`);
    const seen: string[] = [];
    const counts = await replayRecentHistory(root, 3_600_000, Date.now(), (e) => seen.push(e.id), 10_000);
    expect(counts.tailOnly).toBe(1);
    expect(counts.skippedLines).toBe(0);
    expect(seen.at(-1)).toBe('e999');
    expect(seen.length).toBeGreaterThan(50);
    expect(seen.length).toBeLessThan(1000);
  });
});
