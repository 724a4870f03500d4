import { existsSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonUntilExit, type DaemonExit } from '../../support/daemon-exit.js';
import { startDaemonProcess, tempDir, type DaemonProcess } from '../../support/processes.js';
import { freePort } from '../../support/ports.js';

/**
 * A listener someone else holds (issue 26 item 5): the start is refused in
 * the bad-settings format (exit 2, one stderr line naming the variable and
 * the fix) before anything is written: no token file, no state rebuilt, no
 * state directory.
 */

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

/** The built daemon, expected to exit; killed (its own pid) if still running at the deadline. */
const refusedDaemon = (env: Record<string, string>, deadlineMs = 20_000): Promise<DaemonExit> =>
  daemonUntilExit({ AEP_HOST: '127.0.0.1', OTEL_TRACES_EXPORTER: 'none', ...env }, deadlineMs);

async function holdPort(port: number): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => resolve());
  });
  cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
  return server;
}

describe('a listener already taken: refused before any side effect, in the bad-settings format', () => {
  it('AEP_PORT busy: exit 2, one line naming AEP_PORT and the fix; no token file, no state rebuilt, no state dir', async () => {
    const port = await freePort();
    await holdPort(port);
    const base = tempDir();
    const stateDir = path.join(base, 'state');
    const r = await refusedDaemon({ AEP_PORT: String(port), AEP_STATE_DIR: stateDir, AEP_LOG_DIR: path.join(base, 'log') });
    expect([r.code, r.killed]).toEqual([2, false]);
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as { level: string; msg: string; variables: string };
    expect(line).toMatchObject({ level: 'error', variables: 'AEP_PORT' });
    expect(line.msg).toBe(
      `invalid configuration: AEP_PORT: 127.0.0.1:${port} is already in use by another process (another hermes-aep daemon?); stop it, or set AEP_PORT to a free port`,
    );
    expect(r.stderr).not.toMatch(/EADDRINUSE|state rebuilt|created the hook token/);
    expect(existsSync(path.join(stateDir, 'hook-token'))).toBe(false);
    expect(existsSync(stateDir)).toBe(false);
    expect(readdirSync(base)).toEqual([]);
  });

  it('a second daemon on the same socket is told another daemon answers there, and the first keeps its socket', async () => {
    const first: DaemonProcess = await startDaemonProcess({ AEP_PORT: '' });
    cleanups.push(() => first.stop());
    const r = await refusedDaemon({ AEP_PORT: '', AEP_STATE_DIR: first.stateDir, AEP_LOG_DIR: first.historyDir });
    expect([r.code, r.killed]).toEqual([2, false]);
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as { msg: string; variables: string };
    expect(line.variables).toBe('AEP_SOCKET');
    expect(line.msg).toBe(
      `invalid configuration: AEP_SOCKET: another hermes-aep daemon (or another process) answers on ${first.socketPath}; stop it first, or give this one its own AEP_STATE_DIR or AEP_SOCKET`,
    );
    expect(r.stderr).not.toMatch(/state rebuilt/);
    // the first daemon still answers on its socket
    expect((await first.health())['status']).toBeDefined();
  });
});
