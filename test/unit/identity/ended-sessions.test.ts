import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { EndedSessions } from '../../../src/identity/ended-sessions.js';
import { tempDir } from '../../support/processes.js';

describe('ended-session index', () => {
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
