import { spawn } from 'node:child_process';
import { chownSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { postHook } from '../../support/hook-client.js';
import { CLI } from '../../support/paths.js';
import { runShim, startDaemonProcess, tempDir, waitFor } from '../../support/processes.js';
import { readLogs } from '../../support/stream-invariants.js';
import { freePort } from '../../support/ports.js';

/**
 * AEP_START_REFUSED=serve (the image's setting): a start refused by what the
 * daemon found on disk keeps its TCP port to say why, instead of exiting into a
 * container's restart loop. The case is the compose one: the state dir belongs
 * to another uid than the daemon's (the tests run as root, which may chown).
 */

/** a uid that is not this process's */
const OTHER_UID = 65534;
const OWN_UID = process.getuid?.() ?? 0;

interface Refused {
  readonly url: string;
  readonly stderr: () => string;
  stop(): Promise<number | null>;
}

/** Stops every refused daemon a test started and left running (a failed assertion skips its own stop). */
const running: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((stop) => stop()));
});

/** The built daemon, expected to refuse its start and stay up on `port`. */
async function startRefusedServing(env: Record<string, string>, port: number): Promise<Refused> {
  const child = spawn(process.execPath, [CLI, 'daemon'], {
    env: { ...process.env, AEP_HOST: '127.0.0.1', AEP_PORT: String(port), AEP_SOCKET: 'off', OTEL_TRACES_EXPORTER: 'none', AEP_START_REFUSED: 'serve', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  // a failing assertion must not leave the refused daemon running after the file
  running.push(() => (child.exitCode === null && child.signalCode === null ? (child.kill('SIGKILL'), exited) : exited));
  const line = await Promise.race([
    waitFor('the refusal being served', () => /^.*"msg":"refused to start; serving.*$/m.exec(err)?.[0], 20_000),
    exited.then((code) => {
      throw new Error(`daemon exited (${code}) instead of serving its refusal: ${err}`);
    }),
  ]);
  return {
    url: (JSON.parse(line) as { url: string }).url,
    stderr: () => err,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** the hooks the shim spooled (besides them the spool holds its lock and counters) */
const spooled = (stateDir: string) => readdirSync(path.join(stateDir, 'spool')).filter((f) => f.endsWith('.hook'));

const ENVELOPE = (session: string) =>
  JSON.stringify({
    hook_event_name: 'on_session_start',
    session_id: session,
    tool_name: null,
    tool_input: null,
    cwd: '/home/dev/proj',
    extra: { model: 'm', platform: 'cli' },
  });

describe('AEP_START_REFUSED=serve: a refused start answers 503 start-refused with why', () => {
  it('a state dir of another uid: /healthz and every route say so, a hook is spooled by the shim, SIGTERM exits 2; once the owner is fixed a normal start ingests the spooled hook', async () => {
    const base = tempDir();
    const stateDir = path.join(base, 'state');
    const logDir = path.join(base, 'log');
    mkdirSync(stateDir, { mode: 0o700 });
    // as `install` leaves it: the hook token the shim sends over TCP
    writeFileSync(path.join(stateDir, 'hook-token'), 'ab'.repeat(32) + '\n', { mode: 0o600 });
    chownSync(stateDir, OTHER_UID, OTHER_UID);
    chownSync(path.join(stateDir, 'hook-token'), OTHER_UID, OTHER_UID);

    const port = await freePort();
    const refused = await startRefusedServing({ AEP_STATE_DIR: stateDir, AEP_LOG_DIR: logDir }, port);
    // the log says it as the exiting start does: one error line naming the variable and the owner
    expect(refused.stderr()).toContain(`${stateDir} is owned by uid ${OTHER_UID}, not by this user (uid ${OWN_UID})`);

    const health = await fetch(`${refused.url}/healthz`);
    expect(health.status).toBe(503);
    const body = (await health.json()) as { error: string; status: string; detail: string; problems: Array<{ variable: string; rule: string }> };
    expect(body.error).toBe('start-refused');
    expect(body.status).toBe('refused');
    expect(body.problems).toHaveLength(1);
    expect(body.problems[0]!.variable).toBe('AEP_STATE_DIR');
    expect(body.problems[0]!.rule).toContain(`owned by uid ${OTHER_UID}, not by this user (uid ${OWN_UID})`);

    // every route answers the same, before any body is read; Host and Origin are still checked
    const hook = await fetch(`${refused.url}/hook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ENVELOPE('S-direct') });
    expect(hook.status).toBe(503);
    expect(((await hook.json()) as { error: string }).error).toBe('start-refused');
    expect((await fetch(`${refused.url}/stream`)).status).toBe(503);
    // (node:http: fetch would not send a Host of our choosing)
    const foreign = await postHook(`${refused.url}/hook`, false, ENVELOPE('S-foreign'), stateDir, { host: 'attacker.example' });
    expect(foreign.status).toBe(403);
    expect((JSON.parse(foreign.body) as { error: string }).error).toBe('forbidden-host');

    // Hermes's shim: `{}` at once, the hook kept in the spool
    const shim = await runShim(ENVELOPE('S-spooled'), { AEP_HOOK_URL: `${refused.url}/hook`, AEP_STATE_DIR: stateDir });
    expect(shim.code).toBe(0);
    expect(shim.stdout.trim()).toBe('{}');
    expect(spooled(stateDir)).toHaveLength(1);

    expect(await refused.stop()).toBe(2);
    // nothing was recorded while refused
    expect(readLogs(logDir).size).toBe(0);

    // the fix (the daemon's uid owns its state), then a normal start: the spooled hook is in the history once
    chownSync(stateDir, OWN_UID, OWN_UID);
    chownSync(path.join(stateDir, 'hook-token'), OWN_UID, OWN_UID);
    for (const f of readdirSync(path.join(stateDir, 'spool'))) chownSync(path.join(stateDir, 'spool', f), OWN_UID, OWN_UID);
    const daemon = await startDaemonProcess({ AEP_START_REFUSED: 'serve' }, { historyDir: logDir, stateDir });
    try {
      const events = await waitFor('the spooled hook in the history', () => {
        const all = [...readLogs(logDir).values()].flat();
        return all.some((e) => e.session === 'S-spooled') ? all : undefined;
      });
      expect(events.filter((e) => e.session === 'S-spooled' && e.type === 'session.started')).toHaveLength(1);
      expect(events.some((e) => e.session === 'S-direct')).toBe(false);
      await waitFor('the spool emptied', () => (spooled(stateDir).length === 0 ? true : undefined));
      expect((await fetch(`${daemon.url}/healthz`)).status).toBe(200);
    } finally {
      await daemon.stop();
    }
  });

  it('without AEP_PORT there is nothing to serve on: the start exits 2 as before', async () => {
    const base = tempDir();
    const stateDir = path.join(base, 'state');
    mkdirSync(stateDir, { mode: 0o700 });
    chownSync(stateDir, OTHER_UID, OTHER_UID);
    const child = spawn(process.execPath, [CLI, 'daemon'], {
      env: {
        ...process.env,
        AEP_PORT: '',
        AEP_STATE_DIR: stateDir,
        AEP_LOG_DIR: path.join(base, 'log'),
        OTEL_TRACES_EXPORTER: 'none',
        AEP_START_REFUSED: 'serve',
      },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    expect(await new Promise((r) => child.once('exit', (code) => r(code)))).toBe(2);
  });
});
