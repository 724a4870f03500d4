import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { EndedSessions } from '../../../src/identity/ended-sessions.js';
import { tempDir } from '../../support/processes.js';

describe('ended-session index', () => {
  it('a torn last line (a crash mid-append) is skipped and the file healed, never fatal', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'ended-sessions'), '"s1"\n"s2\n42\n"s1"\n');
    const a = new EndedSessions(dir);
    await a.load();
    expect([a.has('s1'), a.has('s2'), a.skipped]).toEqual([true, false, 2]);
    expect(readFileSync(path.join(dir, 'ended-sessions'), 'utf8')).toBe('"s1"\n');
  });

  it('survives a restart: what one process ended, the next knows', async () => {
    const dir = path.join(tempDir(), 'state');
    const a = new EndedSessions(dir);
    await a.load();
    a.add('s/1');
    a.add('weird "id"\n');
    await a.flush();
    const b = new EndedSessions(dir);
    await b.load();
    expect([b.has('s/1'), b.has('weird "id"\n'), b.has('other')]).toEqual([true, true, false]);
  });
});
