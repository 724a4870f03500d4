import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { bumpEpoch } from '../../../src/identity/epoch-store.js';
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
