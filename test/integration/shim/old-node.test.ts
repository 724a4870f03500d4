/**
 * The shim Hermes starts with whatever `node` its environment has: the
 * compiled shim, run by a release older than package.json's engines floor
 * (provisioned from the npm registry, never a machine path), still answers
 * `{}` and exits 0, and still delivers to a live daemon.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { keyedSession } from '../../support/hook-client.js';
import { OLD_NODE_RELEASES, nodeRelease } from '../../support/node-release.js';
import { readJson } from '../../support/paths.js';
import { runShim, startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../../support/processes.js';
import { readLogs } from '../../support/stream-invariants.js';

const run = promisify(execFile);
const PROVISION_MS = 10 * 60_000;

/** `>=x.y` → [x, y] */
const enginesFloor = (): number[] =>
  (/>=\s*([\d.]+)/.exec(readJson<{ engines: { node: string } }>('package.json').engines.node)?.[1] ?? '').split('.').map(Number);

const spooled = (stateDir: string): string[] => {
  const dir = path.join(stateDir, 'spool');
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.hook')) : [];
};

describe.each(OLD_NODE_RELEASES)('the compiled shim started by Node %s', (release) => {
  let node = '';
  let daemon: DaemonProcess | undefined;
  beforeAll(async () => {
    node = await nodeRelease(release);
  }, PROVISION_MS);
  afterAll(async () => {
    await daemon?.stop();
  });

  it('is that release, older than the engines floor', async () => {
    const { stdout } = await run(node, ['--version']);
    expect(stdout.trim()).toBe(`v${release}`);
    const [major, minor] = release.split('.').map(Number) as [number, number];
    const [floorMajor = 0, floorMinor = 0] = enginesFloor();
    expect(major < floorMajor || (major === floorMajor && minor < floorMinor), `${release} against engines >=${floorMajor}.${floorMinor}`).toBe(true);
  });

  it('no daemon: `{}` at once, exit 0, nothing on stderr, and the hook spooled for later', async () => {
    const stateDir = path.join(tempDir(), 'state');
    const [start] = keyedSession(`old-node-down-${release}`, 0);
    const r = await runShim(start!.body, { AEP_SOCKET: path.join(stateDir, 'hook.sock'), AEP_STATE_DIR: stateDir }, 'shim', [], node);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '{}', '']);
    expect(spooled(stateDir)).toHaveLength(1);
  });

  it('a live daemon: `{}`, exit 0, and the hooks are in its history (delivered, not spooled)', async () => {
    daemon = await startDaemonProcess({ AEP_PORT: '' });
    const sid = `old-node-up-${release.replace(/\./g, '-')}`;
    const hooks = keyedSession(sid, 1);
    const shimState = path.join(tempDir(), 'shim-state');
    for (const h of hooks) {
      const r = await runShim(h.body, { ...daemon.shimEnv, AEP_STATE_DIR: shimState }, 'shim', [], node);
      expect([r.code, r.stdout, r.stderr], h.key).toEqual([0, '{}', '']);
    }
    const events = await waitFor('the hooks in the history', () => {
      const evs = [...readLogs(daemon!.historyDir).values()].flat().filter((e) => e.session === sid);
      return evs.length >= hooks.length ? evs : undefined;
    });
    expect(events.map((e) => e.type)).toEqual(hooks.map((h) => h.key.split('|')[0]));
    expect(spooled(shimState)).toEqual([]);
  });
});
