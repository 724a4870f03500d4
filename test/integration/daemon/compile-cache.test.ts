import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDaemonProcess, tempDir } from '../../support/processes.js';
import { privateCacheDir } from '../../../src/daemon/compile-cache.js';

describe("the daemon's compile cache", () => {
  it('lives in the state dir, only once the state dir exists, and holds the compiled modules after a graceful stop', async () => {
    const base = tempDir();
    const dirs = { historyDir: path.join(base, 'log'), stateDir: path.join(base, 'state') };
    const cache = path.join(dirs.stateDir, 'compile-cache');
    // first start: the state dir does not exist yet, so the daemon makes it (0700) and no cache is enabled
    const first = await startDaemonProcess({ AEP_PORT: '' }, dirs);
    expect(await first.stop()).toBe(0);
    expect(existsSync(cache)).toBe(false);
    const second = await startDaemonProcess({ AEP_PORT: '' }, dirs);
    expect(await second.stop()).toBe(0);
    const entries = readdirSync(cache, { recursive: true });
    expect(entries.length).toBeGreaterThan(10);
  });
});

describe('the compile cache directory is private', () => {
  it('is created 0700 by the daemon, whatever the umask', async () => {
    const base = tempDir();
    const dirs = { historyDir: path.join(base, 'log'), stateDir: path.join(base, 'state') };
    mkdirSync(dirs.stateDir, { mode: 0o700 });
    const d = await startDaemonProcess({ AEP_PORT: '' }, dirs);
    expect(await d.stop()).toBe(0);
    expect(statSync(path.join(dirs.stateDir, 'compile-cache')).mode & 0o777).toBe(0o700);
  });

  it('an existing one of ours that is open to others is tightened to 0700', () => {
    const state = tempDir();
    const cache = path.join(state, 'compile-cache');
    mkdirSync(cache, { mode: 0o755 });
    chmodSync(cache, 0o755);
    expect(privateCacheDir(state)).toBe(cache);
    expect(statSync(cache).mode & 0o777).toBe(0o700);
  });

  it('a missing one is made 0700; a file in its place means no cache', () => {
    const state = tempDir();
    expect(privateCacheDir(state)).toBe(path.join(state, 'compile-cache'));
    expect(statSync(path.join(state, 'compile-cache')).mode & 0o777).toBe(0o700);
    const other = tempDir();
    writeFileSync(path.join(other, 'compile-cache'), 'x');
    expect(privateCacheDir(other)).toBeUndefined();
  });
});
