import { describe, expect, it } from 'vitest';
import { closeSync, openSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { silentLogger } from '../../../src/core/logger.js';
import { SpoolDir } from '../../../src/daemon/spool-dir.js';
import { tempDir } from '../../support/processes.js';

const mark = (dir: string, i: number) => closeSync(openSync(path.join(dir, `dropped.${String(i).padStart(15, '0')}-${'0'.repeat(20)}-42-ab${i}`), 'wx'));

describe('the spool dir: hooks the shims dropped', () => {
  it('counts the bytes of `dropped` and the empty markers a shim leaves on a full disk, and folds the markers into `dropped`', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'dropped'), '..');
    for (let i = 0; i < 3; i++) mark(dir, i);
    // not a marker: never counted, never removed
    writeFileSync(path.join(dir, 'dropped.notes'), 'x');
    const spool = new SpoolDir(dir, silentLogger);
    expect(spool.dropped()).toBe(5);
    spool.foldDropMarks();
    expect(spool.dropped()).toBe(5);
    expect(statSync(path.join(dir, 'dropped')).size).toBe(5);
    expect(readdirSync(dir).sort()).toEqual(['dropped', 'dropped.notes']);
    expect(spool.errors).toBe(0);
  });
});
