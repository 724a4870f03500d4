import { readdirSync, readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventKey, keyedSession, postHook, type KeyedHook } from '../support/hook-client.js';
import { startDaemonProcess, type DaemonProcess } from '../support/processes.js';
import { safeFileName } from '../../src/history/safe-file-name.js';

const CALLS = 12;

/**
 * README: "A daemon crash loses nothing answered whatever the value" of AEP_FSYNC_INTERVAL_MS: the default under the full
 * load (SIGKILL once 900 of 100 × 28 hooks were answered 200), and both ends of the setting (never synced within the run;
 * synced before each answer) under a smaller one.
 */
const CASES: { fsync: string; env: Record<string, string>; sessions: number; killAfter: number }[] = [
  { fsync: 'default (1000)', env: {}, sessions: 100, killAfter: 900 },
  { fsync: '3600000', env: { AEP_FSYNC_INTERVAL_MS: '3600000' }, sessions: 30, killAfter: 250 },
  { fsync: '0', env: { AEP_FSYNC_INTERVAL_MS: '0' }, sessions: 30, killAfter: 250 },
];

/** Each session file's lines: the events that parse, and how many lines did not. */
function readSessionFiles(historyDir: string): Map<string, { keys: Set<string>; invalid: number; endsInNewline: boolean }> {
  const dir = path.join(historyDir, 'hermes');
  const out = new Map<string, { keys: Set<string>; invalid: number; endsInNewline: boolean }>();
  for (const f of readdirSync(dir)) {
    const text = readFileSync(path.join(dir, f), 'utf8');
    const keys = new Set<string>();
    let invalid = 0;
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        keys.add(eventKey(JSON.parse(line)));
      } catch {
        invalid++;
      }
    }
    out.set(f, { keys, invalid, endsInNewline: text.length === 0 || text.endsWith('\n') });
  }
  return out;
}

/**
 * The contract: a hook is answered only after its events reached the
 * operating system. So a SIGKILL, whenever it lands, loses nothing that was
 * answered 200 (the page cache outlives the process).
 */
describe.each(CASES)('kill -9 under load, AEP_FSYNC_INTERVAL_MS=$fsync: nothing answered is lost', ({ env, sessions: SESSIONS, killAfter: KILL_AFTER }) => {
  let daemon: DaemonProcess;
  const answered: KeyedHook[] = [];
  let unanswered = 0;

  beforeAll(async () => {
    daemon = await startDaemonProcess(env);
    const agent = new Agent({ keepAlive: true, maxSockets: SESSIONS });
    let killing: Promise<void> | undefined;
    // every session in order (one hook at a time, as Hermes fires them), all sessions at once
    await Promise.all(
      Array.from({ length: SESSIONS }, async (_, s) => {
        for (const hook of keyedSession(`kill9_${s}`, CALLS)) {
          const r = await postHook(daemon.hookUrl, agent, hook.body, daemon.stateDir);
          if (r.status !== 200) {
            unanswered++;
            continue;
          }
          answered.push(hook);
          if (answered.length === KILL_AFTER) killing = daemon.kill();
        }
      }),
    );
    agent.destroy();
    await killing;
  });
  afterAll(async () => {
    await daemon?.kill();
  });

  it('the daemon was killed mid-load (some hooks got no answer)', () => {
    expect(daemon.child.signalCode).toBe('SIGKILL');
    expect(answered.length).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(unanswered).toBeGreaterThan(0);
  });

  it('every hook answered 200 has its event in its session log; no line is torn', () => {
    const files = readSessionFiles(daemon.historyDir);
    const lost: string[] = [];
    for (const hook of answered) {
      const file = files.get(`${safeFileName(hook.session)}.jsonl`);
      if (!file?.keys.has(hook.key)) lost.push(`${hook.session} ${hook.key}`);
    }
    expect({ answered: answered.length, lost: lost.length, first: lost.slice(0, 5) }).toEqual({ answered: answered.length, lost: 0, first: [] });
    for (const [name, f] of files) {
      expect({ name, invalid: f.invalid, endsInNewline: f.endsInNewline }).toEqual({ name, invalid: 0, endsInNewline: true });
    }
  });
});
