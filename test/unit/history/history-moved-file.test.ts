import { mkdirSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonlHistorySink } from '../../../src/history/jsonl-history-sink.js';
import { tempDir } from '../../support/processes.js';
import { eventMaker } from './sink-events.js';

const ev = eventMaker('m');
const ids = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { id: string }).id);

describe('JSONL history sink: a session log deleted or renamed under the daemon (log rotation)', () => {
  it('renamed away: the next events go to a new file at the path, the old one keeps what it had', async () => {
    const root = tempDir();
    const file = path.join(root, 'hermes', 'S1.jsonl');
    const sink = new JsonlHistorySink(root, 1000);
    const a = ev('S1');
    expect(await sink.write([a])).toMatchObject({ written: 1 });
    renameSync(file, `${file}.1`);
    const b = ev('S1');
    expect(await sink.write([b])).toMatchObject({ written: 1 });
    expect(ids(`${file}.1`)).toEqual([a.id]);
    expect(ids(file)).toEqual([b.id]);
    expect(sink.stats()).toMatchObject({ reopened_moved: 1 });
    await sink.shutdown();
  });

  it('deleted: the next events go to a new file at the path, not to the unlinked one', async () => {
    const root = tempDir();
    const file = path.join(root, 'hermes', 'S2.jsonl');
    const sink = new JsonlHistorySink(root, 1000);
    await sink.write([ev('S2')]);
    unlinkSync(file);
    const b = ev('S2');
    expect(await sink.write([b])).toMatchObject({ written: 1 });
    expect(ids(file)).toEqual([b.id]);
    await sink.shutdown();
  });

  it('replaced by a directory: that session is refused (per-file failure), never written to the unlinked file', async () => {
    const root = tempDir();
    const file = path.join(root, 'hermes', 'S3.jsonl');
    const sink = new JsonlHistorySink(root, 1000, { probeIntervalMs: 3_600_000 });
    await sink.write([ev('S3')]);
    unlinkSync(file);
    mkdirSync(file);
    const out = await sink.write([ev('S3')]);
    expect(out).toMatchObject({ written: 0, retained: 1 });
    expect(sink.refusal('S3')).toMatch(/EISDIR/);
    expect(sink.refusal('other')).toBeUndefined();
    await sink.shutdown();
  });
});
