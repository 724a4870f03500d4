import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { findLineEnd } from '../../../src/history/find-line.js';
import { HEADER_SLOT, readSnapshot, SnapshotRejected, writeSnapshot } from '../../../src/state/snapshot-file.js';
import { tempDir } from '../../support/processes.js';

const line = (id: string, extra: Record<string, unknown> = {}) => `${JSON.stringify({ aep: '0.1', id, type: 'x', session: 's', ...extra })}\n`;

describe('snapshot file', () => {
  it('round-trips cursors, mirror state and lanes, whatever the session ids hold', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }), { maxLength: 20 }), fc.boolean(), async (sessions, ended) => {
        const file = path.join(tempDir(), 'snapshot');
        // when each was last heard from (version 3): kept for some, unknown for the others
        const lanes = sessions.map((s, i) => ({
          session: s,
          ended,
          ...(i % 2 === 0 ? { last: 1_795_000_000_000 + i } : {}),
          dormant: JSON.stringify({ session: s, note: 'tab\there "q" \\ \n' }),
        }));
        const cursors = new Map([['a.jsonl', { offset: 10, ino: 7, mtimeMs: 1.5 }]]);
        const mirror = { any: ['json', 1, null] };
        await writeSnapshot(
          file,
          { daemon: 'v', written_at: 't', reason: 'test', epoch: 3, log_dir: '/l', mirror: 'm', spool_keys: ['0001-k'] },
          cursors,
          [JSON.stringify(mirror)],
          lanes,
        );
        const back = readSnapshot(file)!;
        expect(back.lanes.map((l) => ({ ...l, dormant: Buffer.from(l.dormant).toString('utf8') }))).toEqual(lanes);
        expect(back.cursors).toEqual(cursors);
        expect(JSON.parse(back.mirror!.toString('utf8'))).toEqual(mirror);
        expect(back.header).toMatchObject({ version: 3, epoch: 3, spool_keys: ['0001-k'], lanes: lanes.length, files: 1 });
      }),
      { numRuns: 60 },
    );
  });

  it('is absent, or rejected with a reason, never thrown otherwise', async () => {
    const dir = tempDir();
    expect(readSnapshot(path.join(dir, 'none'))).toBeUndefined();
    const file = path.join(dir, 'snapshot');
    const lanes = [{ session: 's1', ended: false, dormant: '{"session":"s1"}' }];
    await writeSnapshot(
      file,
      { daemon: 'v', written_at: 't', reason: 'r', epoch: 0, log_dir: '/l', mirror: null, spool_keys: [] },
      new Map([['s1.jsonl', { offset: 1, ino: 2, mtimeMs: 3 }]]),
      null,
      lanes,
    );
    const good = readFileSync(file);
    expect(good.indexOf(10)).toBe(HEADER_SLOT - 1);
    // a byte changed anywhere that matters: the padding of the header may change to any other blank
    const meaningful = [...Array(good.length).keys()].filter((i) => i >= HEADER_SLOT - 1 || good[i] !== 32);
    fc.assert(
      fc.property(fc.constantFrom(...meaningful), fc.integer({ min: 1, max: 255 }), (at, x) => {
        const bad = Buffer.from(good);
        bad[at] = bad[at]! ^ x;
        writeFileSync(file, bad);
        try {
          readSnapshot(file);
        } catch (err) {
          expect(err).toBeInstanceOf(SnapshotRejected);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("finding where a log's last captured event ends", () => {
  it('finds the line, not a mention of the id in content, across chunk boundaries, and glued after a torn write', async () => {
    const dir = tempDir();
    const file = path.join(dir, 's.jsonl');
    const big = 'x'.repeat(200_000);
    const text = line('e1') + line('e2', { data: big }) + line('e3', { data: { quote: '"id":"e2"' } }) + '{"aep":"0.1","id":"tor' + line('e4') + line('e5');
    writeFileSync(file, text);
    const end = (id: string) => text.indexOf('\n', text.indexOf(`"id":"${id}"`)) + 1;
    expect((await findLineEnd(file, 'e5'))?.offset).toBe(end('e5'));
    expect((await findLineEnd(file, 'e2'))?.offset).toBe(end('e2'));
    expect((await findLineEnd(file, 'e1'))?.offset).toBe(end('e1'));
    expect((await findLineEnd(file, 'e4'))?.offset).toBe(end('e4'));
    expect(await findLineEnd(file, 'e9')).toBeUndefined();
    // bounded: not searched beyond maxBytes from the end
    expect(await findLineEnd(file, 'e1', 1000)).toBeUndefined();
    // a line longer than what is parsed whole: known by the id it starts with
    const huge = path.join(dir, 'h.jsonl');
    const long = line('h1', { data: 'y'.repeat(3 * 1024 * 1024) });
    writeFileSync(huge, line('h0') + long + line('h2'));
    expect((await findLineEnd(huge, 'h1'))?.offset).toBe(line('h0').length + long.length);
    expect((await findLineEnd(huge, 'h0'))?.offset).toBe(line('h0').length);
  });
});
