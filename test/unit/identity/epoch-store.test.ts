import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bumpEpoch, commitEpoch, HighestEpoch, MAX_EPOCH, readStoredEpoch } from '../../../src/identity/epoch-store.js';
import { tempDir } from '../../support/processes.js';

describe('epoch store', () => {
  it('starts at 0 and bumps at every start, never reusing a value', async () => {
    const dir = path.join(tempDir(), 'state');
    expect([await bumpEpoch(dir), await bumpEpoch(dir), await bumpEpoch(dir)]).toEqual([0, 1, 2]);
  });
  it('refuses a corrupt epoch file instead of restarting at 0', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'epoch'), 'garbage');
    await expect(bumpEpoch(dir)).rejects.toThrow(/corrupt epoch file/);
  });
});

describe('epoch store against the history', () => {
  it('a missing epoch file starts past the highest epoch the history shows, not at 0', async () => {
    const dir = path.join(tempDir(), 'state');
    expect(await bumpEpoch(dir, 1)).toBe(2);
    expect(readFileSync(path.join(dir, 'epoch'), 'utf8')).toBe('2\n');
  });
  it('a lower epoch file is raised past the history; a higher one still wins', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'epoch'), '0\n');
    expect(await bumpEpoch(dir, 4)).toBe(5);
    expect(await bumpEpoch(dir, 4)).toBe(6);
  });
  it('says when the state dir was behind the history', async () => {
    const dir = tempDir();
    const stored = await readStoredEpoch(dir);
    expect(stored).toBe(-1);
    expect(await commitEpoch(dir, stored, 3)).toEqual({ epoch: 4, stored: -1, history: 3, behind: true });
    expect(await commitEpoch(dir, await readStoredEpoch(dir), 3)).toEqual({ epoch: 5, stored: 4, history: 3, behind: false });
  });
  it('a garbage epoch file still refuses the start, whatever the history shows', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'epoch'), 'garbage');
    await expect(bumpEpoch(dir, 7)).rejects.toThrow(/corrupt epoch file/);
  });
});

describe('epoch store at the end of its range', () => {
  it('an epoch file at the largest value refuses the start rather than write one it could not read back (and go back)', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'epoch'), `${MAX_EPOCH}\n`);
    await expect(bumpEpoch(dir)).rejects.toThrow(/epoch exhausted/);
    expect(readFileSync(path.join(dir, 'epoch'), 'utf8')).toBe(`${MAX_EPOCH}\n`);
  });

  it('the history read-back takes every epoch the file format takes, the largest included', () => {
    const h = new HighestEpoch();
    h.see(MAX_EPOCH);
    expect(h.value).toBe(MAX_EPOCH);
    h.see(MAX_EPOCH + 1);
    expect(h.value).toBe(MAX_EPOCH);
  });
});
