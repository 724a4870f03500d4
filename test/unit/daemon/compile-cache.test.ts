import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDaemonProcess, tempDir } from '../../support/processes.js';

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
