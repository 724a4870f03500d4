import { existsSync, mkdirSync, readFileSync, rmdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventKey, keyedSession } from '../support/hook-client.js';
import { httpCall, runShim, startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../support/processes.js';
import { safeFileName } from '../../src/history/safe-file-name.js';

const GOOD = 20;
const CALLS = 4;

/** the event keys of a session's history, in order */
function keys(hermes: string, session: string): string[] {
  const file = path.join(hermes, `${safeFileName(session)}.jsonl`);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => eventKey(JSON.parse(l) as { type: string; data: Record<string, any> }));
}

/** A daemon whose history has a directory where `session`'s file should be (opening it fails EISDIR, even as root). */
async function withBadSessionFile(prefix: string, session: string) {
  const base = tempDir(prefix);
  const historyDir = path.join(base, 'log');
  const stateDir = path.join(base, 'state');
  const hermes = path.join(historyDir, 'hermes');
  mkdirSync(hermes, { recursive: true, mode: 0o700 });
  const badFile = path.join(hermes, `${safeFileName(session)}.jsonl`);
  mkdirSync(badFile);
  const daemon = await startDaemonProcess({}, { historyDir, stateDir });
  return { daemon, stateDir, hermes, badFile };
}

/**
 * The trust issue's break 3, as it was reported: one session's history file cannot be written (a directory stands
 * where it should be), its hooks keep coming through the real shim (refused, so the shim spools them), while twenty
 * other sessions post their hooks: the others must never be refused, neither live nor behind the spool of the bad one.
 */
describe('one session file that cannot be written degrades that session only', () => {
  let daemon: DaemonProcess | undefined;
  afterAll(async () => {
    await daemon?.stop();
  });

  it('the other sessions are all answered 200 while the bad one is refused and spooled; fixed, it lands whole, in order, once', async () => {
    const bad = keyedSession('bad_session', CALLS);
    const w = await withBadSessionFile('hermes-aep-badsession-', 'bad_session');
    daemon = w.daemon;
    const { stateDir, hermes, badFile } = w;
    const good = Array.from({ length: GOOD }, (_, i) => keyedSession(`good_${i}`, CALLS));
    const statuses: number[] = [];
    const shimOut: string[] = [];
    // step by step: every good session sends its next hook (at once), and the bad one one hook every other step
    for (let step = 0; step < good[0]!.length; step++) {
      const posts = good.map((hooks) =>
        httpCall(
          { socketPath: daemon!.socketPath },
          { method: 'POST', path: '/hook', headers: { 'content-type': 'application/json' }, body: hooks[step]!.body },
        ).then((r) => statuses.push(r.status)),
      );
      const b = step % 2 === 0 ? bad[step / 2] : undefined;
      const shim = b ? runShim(b.body, { ...daemon.shimEnv, AEP_STATE_DIR: stateDir }).then((r) => shimOut.push(r.stdout)) : undefined;
      await Promise.all([...posts, shim]);
    }
    const sent = bad.slice(0, Math.ceil(good[0]!.length / 2));
    expect(shimOut.every((o) => o === '{}')).toBe(true);
    // never a 503 for the others: not live, not behind the bad session's spooled hooks
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    for (let i = 0; i < GOOD; i++) expect(keys(hermes, `good_${i}`)).toEqual(good[i]!.map((h) => h.key));
    const h = await daemon.health();
    expect(h.sinks.log.failing_files).toBe(1);
    expect(h.status).toBe('ok');
    // its spooled hooks wait in the spool (parked), they do not stall the drain for everyone
    expect(h.spool.parked).toBeGreaterThan(0);
    expect(h.spool.parked_sessions).toBe(1);
    // fixed: its next hook never overtakes the parked ones; all land, in order, each once
    rmdirSync(badFile);
    const next = bad[sent.length]!;
    expect((await runShim(next.body, { ...daemon.shimEnv, AEP_STATE_DIR: stateDir })).stdout).toBe('{}');
    const all = [...sent, next].map((x) => x.key);
    await waitFor('the bad session written', () => (keys(hermes, 'bad_session').length === all.length ? true : undefined), 60_000);
    await waitFor('the spool empty', async () => ((await daemon!.health()).spool.pending === 0 ? true : undefined), 30_000);
    expect(keys(hermes, 'bad_session')).toEqual(all);
    expect((await daemon.health()).spool).toMatchObject({ parked: 0, parked_sessions: 0 });
  });
});

describe('hooks held for a failing session file are never given up while it fails: fixed, they land, and their spooled copies are dropped', () => {
  let daemon: DaemonProcess | undefined;
  afterAll(async () => {
    await daemon?.stop();
  });

  it('a turn start held past many retries lands once (its spooled copy, processed after a give-up, would meet the turn already started)', async () => {
    const hooks = keyedSession('held_session', CALLS);
    const w = await withBadSessionFile('hermes-aep-heldlong-', 'held_session');
    daemon = w.daemon;
    const { stateDir, hermes, badFile } = w;
    const shim = async (i: number) => expect((await runShim(hooks[i]!.body, { ...daemon!.shimEnv, AEP_STATE_DIR: stateDir })).stdout).toBe('{}');
    // the session start and its turn start (pre_llm_call): held in memory, answered 503, spooled
    await shim(0);
    await shim(1);
    // more failed retries of the file than the attempt budget (5), or (as before the fix) the held hooks given up
    await waitFor(
      'retried past the attempt budget, or given up',
      async () => {
        const h = await daemon!.health();
        return h.sinks.log.errors >= 6 || h.hooks_lost >= 1 ? true : undefined;
      },
      90_000,
      200,
    );
    await shim(2);
    await shim(3);
    rmdirSync(badFile);
    await shim(4);
    const want = hooks.slice(0, 5).map((h) => h.key);
    await waitFor('all five written', () => (keys(hermes, 'held_session').length >= want.length ? true : undefined), 60_000);
    await waitFor('the spool empty', async () => ((await daemon!.health()).spool.pending === 0 ? true : undefined), 30_000);
    expect(keys(hermes, 'held_session')).toEqual(want);
    expect((await daemon.health()).hooks_lost).toBe(0);
  });
});
