import { mkdirSync, readFileSync, rmdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonlHistorySink } from '../../../src/history/jsonl-history-sink.js';
import { tempDir, waitFor } from '../../support/processes.js';
import { recordingLog } from './recording-log.js';
import { eventMaker } from './sink-events.js';

const ev = eventMaker('f');

const ids = (root: string, session: string) =>
  readFileSync(path.join(root, 'hermes', `${session}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { id: string }).id);

describe('JSONL history sink: one session file that cannot be written', () => {
  it('degrades that session only: the others are taken and written; it is refused, counted, retried and recovers', async () => {
    const root = tempDir();
    // a directory where the session file should be: opening it fails EISDIR (real, even as root)
    const bad = path.join(root, 'hermes', 'bad.jsonl');
    mkdirSync(bad, { recursive: true });
    const { log, lines } = recordingLog();
    const sink = new JsonlHistorySink(root, 1000, { log, probeIntervalMs: 10 });
    await sink.start();
    const a = ev('bad');
    const out = await sink.write([a]);
    expect(out).toMatchObject({ written: 0, retained: 1, lost: 0, reason: 'open failed: EISDIR' });
    // the other sessions are not refused, and the sink as a whole is not degraded
    expect(sink.refusal('good')).toBeUndefined();
    expect(sink.refusal()).toBeUndefined();
    expect(sink.health()).toBeUndefined();
    const g = ev('good');
    expect(await sink.write([g])).toEqual({ written: 1, retained: 0, lost: 0 });
    expect(ids(root, 'good')).toEqual([g.id]);
    // that session is refused (503 upstream), and it shows in the counters
    expect(sink.refusal('bad')).toBe('session file failing: EISDIR');
    expect(sink.stats()).toMatchObject({ failing_files: 1, file_refused: 1 });
    expect(lines.filter((l) => l.level === 'warn' && l.msg.includes('session log file cannot be written'))).toHaveLength(1);
    // fixed: the periodic retry opens it, the retained line lands, and the session is taken again
    rmdirSync(bad);
    expect(await out.final).toEqual({ written: 1, lost: 0 });
    expect(ids(root, 'bad')).toEqual([a.id]);
    await waitFor('session file recovered', () => (sink.stats().failing_files === 0 ? true : undefined), 5_000);
    expect(sink.refusal('bad')).toBeUndefined();
    await sink.shutdown();
  });

  it('a directory-wide error (ENOSPC-class) still refuses every session', async () => {
    const root = tempDir();
    mkdirSync(path.join(root, 'hermes'), { recursive: true });
    const sink = new JsonlHistorySink(root, 1000, {
      probeIntervalMs: 3_600_000,
      open: async () => {
        throw Object.assign(new Error('injected EROFS'), { code: 'EROFS' });
      },
    });
    const out = await sink.write([ev('s1')]);
    expect(out.retained).toBe(1);
    expect(sink.refusal('other')).toBe('open failed: EROFS');
    expect(sink.stats()).toMatchObject({ failing_files: 0 });
    await sink.shutdown();
  });
});
