import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDirectories } from '../../../src/config/paths.js';
import { ConfigError } from '../../../src/config/read-env.js';
import { tempDir } from '../../support/processes.js';

async function problems(dirs: [string, string][], opts?: Parameters<typeof checkDirectories>[1]): Promise<ConfigError['problems']> {
  const err = await checkDirectories(dirs, opts).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err === undefined) return [];
  expect(err).toBeInstanceOf(ConfigError);
  return (err as ConfigError).problems;
}

describe('the directories the settings name are checked before anything is created there', () => {
  it('existing, or missing under a real directory: fine (nothing is created by the check)', async () => {
    const root = tempDir();
    expect(
      await problems([
        ['AEP_LOG_DIR', root],
        ['AEP_STATE_DIR', path.join(root, 'a', 'b')],
      ]),
    ).toEqual([]);
  });

  it('a file in the way: named, whether it is the directory itself or a part of its path', async () => {
    const root = tempDir();
    writeFileSync(path.join(root, 'f'), '');
    writeFileSync(path.join(root, 'g'), '');
    expect(
      await problems([
        ['AEP_LOG_DIR', path.join(root, 'f')],
        ['AEP_STATE_DIR', path.join(root, 'g', 'state', 'x')],
      ]),
    ).toEqual([
      { variable: 'AEP_LOG_DIR', rule: 'a directory (this is a file)' },
      { variable: 'AEP_STATE_DIR', rule: 'a path whose every part is a directory (one is a file)' },
    ]);
  });

  it.runIf(process.platform === 'linux')('under /proc or /sys (where a recursive mkdir never returns): refused, naming the variable', async () => {
    expect(
      await problems([
        ['AEP_LOG_DIR', '/proc/aep-logs/x'],
        ['AEP_RECORD_DIR', '/sys/aep'],
        ['AEP_OTEL_FILE', '/proc/self'],
      ]),
    ).toEqual([
      { variable: 'AEP_LOG_DIR', rule: "a directory on a disk, not on the kernel's proc pseudo-filesystem" },
      { variable: 'AEP_RECORD_DIR', rule: "a directory on a disk, not on the kernel's sysfs pseudo-filesystem" },
      { variable: 'AEP_OTEL_FILE', rule: "a directory on a disk, not on the kernel's proc pseudo-filesystem" },
    ]);
  });

  it('a directory inside one checked before is left to that check', async () => {
    const seen: string[] = [];
    const probe = (d: string) => (seen.push(d), Promise.resolve(undefined));
    await checkDirectories(
      [
        ['AEP_STATE_DIR', '/st'],
        ['AEP_SOCKET', '/st'],
        ['AEP_LOG_DIR', '/st-logs'],
        ['AEP_OTEL_FILE', '/st-logs/otel'],
      ],
      { probe },
    );
    expect(seen).toEqual(['/st', '/st-logs']);
  });

  it('a file system that does not answer: refused at the deadline, naming only the variables still waiting', async () => {
    const root = tempDir();
    mkdirSync(path.join(root, 'ok'));
    const probe = (d: string) => (d.endsWith('hung') ? new Promise<undefined>(() => {}) : Promise.resolve(undefined));
    // the hung probe never settles, so only the deadline can answer: without it this await never resolves and the test
    // fails at its timeout. How close to 200 ms it answers: bench suite bounded-work (bounded.dir_check_deadline)
    expect(
      await problems(
        [
          ['AEP_STATE_DIR', path.join(root, 'ok')],
          ['AEP_LOG_DIR', path.join(root, 'hung')],
        ],
        { probe, timeoutMs: 200 },
      ),
    ).toEqual([{ variable: 'AEP_LOG_DIR', rule: 'a path the file system answers for within 200 ms' }]);
  });
});
