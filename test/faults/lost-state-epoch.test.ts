import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyedSession, postHook } from '../support/hook-client.js';
import { startDaemonProcess, waitFor, type DaemonProcess } from '../support/processes.js';
import { safeFileName } from '../../src/history/safe-file-name.js';

const SESSION = 'lost_state_epoch';
const BEHIND = "the state dir's epoch was behind the history";

/**
 * The epoch is the only thing that keeps a `session:epoch:seq` position
 * unique across restarts (seq starts at 0 in every process). Losing the state
 * dir (its `epoch` file) must not bring an old epoch back: the history the
 * daemon replays at start shows which epochs were used.
 */
describe('losing the state dir does not reuse epochs', () => {
  const hooks = keyedSession(SESSION, 6);
  const epochs: number[] = [];
  const stderr: string[] = [];
  let dirs: { historyDir: string; stateDir: string };
  let live: DaemonProcess | undefined;

  /** one daemon process on the same dirs: its epoch, `count` hooks of the session, a graceful stop */
  const run = async (from: number, count: number) => {
    const d = await startDaemonProcess({}, dirs);
    live = d;
    dirs ??= { historyDir: d.historyDir, stateDir: d.stateDir };
    epochs.push((await d.health()).epoch as number);
    for (const h of hooks.slice(from, from + count)) expect((await postHook(d.hookUrl, false, h.body, d.stateDir)).status).toBe(200);
    await waitFor('log drained', async () => ((await d.health()).sinks.log.queued === 0 ? true : undefined));
    expect(await d.stop()).toBe(0);
    stderr.push(d.stderr());
    live = undefined;
  };

  beforeAll(async () => {
    await run(0, 4);
    await run(4, 4);
    // the state dir lost (a reinstall, a wiped ~/.aep/state, a new container volume), the history kept
    rmSync(dirs.stateDir, { recursive: true, force: true });
    await run(8, 4);
    await run(12, 4);
  });
  afterAll(async () => {
    await live?.kill();
  });

  it('every start runs in a higher epoch than the one before, the state dir lost or not', () => {
    expect(epochs).toHaveLength(4);
    for (let i = 1; i < epochs.length; i++) expect(epochs[i]!).toBeGreaterThan(epochs[i - 1]!);
  });

  it('no session:epoch:seq position names two events', () => {
    const file = path.join(dirs.historyDir, 'hermes', `${safeFileName(SESSION)}.jsonl`);
    const events = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; session: string; epoch: number; seq: number });
    expect(events.length).toBeGreaterThanOrEqual(hooks.length);
    const byPosition = new Map<string, string[]>();
    for (const ev of events) {
      const pos = `${ev.session}:${ev.epoch}:${ev.seq}`;
      byPosition.set(pos, [...(byPosition.get(pos) ?? []), ev.id]);
    }
    expect([...byPosition].filter(([, ids]) => ids.length > 1)).toEqual([]);
  });

  it('says once, without content, that the state dir was behind the history, only on the start that found it so', () => {
    const lines = stderr.map((s) => s.split('\n').filter((l) => l.includes(BEHIND)));
    expect(lines.map((l) => l.length)).toEqual([0, 0, 1, 0]);
    expect(lines[2]![0]).not.toContain(SESSION);
  });
});
