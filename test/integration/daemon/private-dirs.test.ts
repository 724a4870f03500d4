import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';

/** a uid that is not this process's (the tests run as root, which may chown to it) */
const OTHER_UID = 65534;

/** Start the real daemon with these dirs; it is expected to refuse (exit 2) at once. The timeout only bounds a daemon that does not. */
function startRefused(env: Record<string, string>) {
  const r = spawnSync(process.execPath, [CLI, 'daemon'], {
    env: { ...process.env, AEP_PORT: '', OTEL_TRACES_EXPORTER: 'none', ...env },
    encoding: 'utf8',
    timeout: 20_000,
    killSignal: 'SIGKILL',
  });
  const lines = r.stderr.split('\n').filter((l) => l.includes('"level":"error"'));
  return { code: r.status, lines };
}

describe('the daemon refuses directories other users own or may write in', () => {
  it('a pre-existing shared AEP_LOG_DIR (0777) with a planted session symlink: refused at start with one line naming the dir and the fix; nothing written', () => {
    const base = tempDir();
    const logDir = path.join(base, 'shared-logs');
    mkdirSync(path.join(logDir, 'hermes'), { recursive: true });
    chmodSync(logDir, 0o777);
    chmodSync(path.join(logDir, 'hermes'), 0o777);
    const victim = path.join(base, 'victim.txt');
    writeFileSync(victim, 'precious\n', { mode: 0o600 });
    symlinkSync(victim, path.join(logDir, 'hermes', 'S1.jsonl'));

    const r = startRefused({ AEP_LOG_DIR: logDir, AEP_STATE_DIR: path.join(base, 'state') });
    expect(r.code).toBe(2);
    expect(r.lines).toHaveLength(1);
    const line = JSON.parse(r.lines[0]!) as { msg: string; variables: string };
    expect(line.variables).toContain('AEP_LOG_DIR');
    expect(line.msg).toContain(`${logDir} is writable by every user (mode 0777); chmod 700 ${logDir}`);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(readdirSync(path.join(logDir, 'hermes'))).toEqual(['S1.jsonl']);
  });

  it('an AEP_STATE_DIR owned by another user: refused at start, naming the owner', () => {
    const base = tempDir();
    const stateDir = path.join(base, 'state');
    mkdirSync(stateDir, { mode: 0o700 });
    chownSync(stateDir, OTHER_UID, OTHER_UID);
    const r = startRefused({ AEP_LOG_DIR: path.join(base, 'log'), AEP_STATE_DIR: stateDir });
    expect(r.code).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toContain(`${stateDir} is owned by uid ${OTHER_UID}, not by this user`);
    expect(readdirSync(stateDir)).toEqual([]);
  });
});

describe('ensurePrivateDirs', async () => {
  const { ensurePrivateDirs } = await import('../../../src/daemon/private-dirs.js');
  const { loadConfig } = await import('../../../src/config/config.js');
  const configOf = (base: string, extra: Record<string, string> = {}) =>
    loadConfig({ AEP_LOG_DIR: path.join(base, 'log'), AEP_STATE_DIR: path.join(base, 'state'), ...extra });

  it('makes the state dir, spool/, the log dir and hermes/ 0700', async () => {
    const base = tempDir();
    await ensurePrivateDirs(configOf(base));
    for (const d of ['state', 'state/spool', 'log', 'log/hermes']) expect(statSync(path.join(base, d)).mode & 0o777).toBe(0o700);
  });

  it('a configured dir may be a symlink to a private dir of ours; a subdir the daemon makes may not', async () => {
    const base = tempDir();
    const real = path.join(base, 'disk2-logs');
    mkdirSync(real, { mode: 0o700 });
    symlinkSync(real, path.join(base, 'log'));
    await ensurePrivateDirs(configOf(base));
    expect(existsSync(path.join(real, 'hermes'))).toBe(true);

    const other = tempDir();
    const elsewhere = path.join(other, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o700 });
    mkdirSync(path.join(other, 'log'), { mode: 0o700 });
    symlinkSync(elsewhere, path.join(other, 'log', 'hermes'));
    await expect(ensurePrivateDirs(configOf(other))).rejects.toThrow(`AEP_LOG_DIR: ${path.join(other, 'log', 'hermes')} is a symlink`);
  });

  it("a group-writable spool/, a foreign agent's dir of another user, a loose AEP_RECORD_DIR: each named", async () => {
    const base = tempDir();
    await ensurePrivateDirs(configOf(base));
    chmodSync(path.join(base, 'state', 'spool'), 0o770);
    const agent = path.join(base, 'log', 'ingest', 'codex');
    mkdirSync(agent, { recursive: true, mode: 0o700 });
    chownSync(agent, OTHER_UID, OTHER_UID);
    const record = path.join(base, 'record');
    mkdirSync(record);
    chmodSync(record, 0o757);
    const err = await ensurePrivateDirs(configOf(base, { AEP_RECORD_DIR: record })).then(
      () => undefined,
      (e: unknown) => e as Error & { variables: string[] },
    );
    expect(err?.variables).toEqual(['AEP_STATE_DIR', 'AEP_RECORD_DIR', 'AEP_LOG_DIR']);
    expect(err?.message).toContain(`${path.join(base, 'state', 'spool')} is writable by its group (mode 0770); chmod 700`);
    expect(err?.message).toContain(`${agent} is owned by uid ${OTHER_UID}`);
    expect(err?.message).toContain(`${record} is writable by every user (mode 0757)`);
  });
});
