import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hook } from '../support/control-rig.js';
import { CLI } from '../support/paths.js';
import { httpCall, runShim, startDaemonProcess, waitFor, type DaemonProcess } from '../support/processes.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const GATES = { AEP_HERMES_CONTROL: '1', AEP_ATTENTION_TIMEOUT_MS: '30000' };
/** this test's own timeout (vitest.config.ts's faults default), stated because the test relies on it */
const TEST_MS = 120_000;

/**
 * kill -9 while a gated call is held, through the real shim: the shim fails open (`{}`, exit 0) as soon as the
 * daemon's socket dies, and the next daemon closes the card the dead one left open (dismissed), so a late
 * answer is refused rather than taken for a live card.
 */
describe('the control gate under kill -9', () => {
  const daemons: DaemonProcess[] = [];
  afterAll(async () => {
    for (const d of daemons) await d.stop().catch(() => undefined);
  });

  it(
    'a held shim answers {} when the daemon dies; the restarted daemon dismisses the orphaned card and refuses a late answer',
    async () => {
      const d = await startDaemonProcess(GATES);
      daemons.push(d);
      const session = '20261201_130000_kill9gate';
      const post = (body: string) =>
        httpCall({ socketPath: d.socketPath }, { method: 'POST', path: '/hook', headers: { host: 'localhost', 'content-type': 'application/json' }, body });
      for (const h of ['on_session_start', 'pre_llm_call']) expect((await post(hook(h, session))).status).toBe(200);
      // the shim's own hold window is past this test's timeout (its deadline: the window + 3 s), so a shim that sat out
      // its deadline instead of ending with the dead socket would fail the test by timing out: no clock needed. The
      // daemon holds within its own 30 s window; it is killed long before.
      const env = { AEP_STATE_DIR: d.stateDir, ...GATES, AEP_ATTENTION_TIMEOUT_MS: String(2 * TEST_MS) };
      const shim = runShim(hook('pre_tool_call', session, { call: 'call_k9', tool: 'terminal' }), env);
      const file = path.join(d.historyDir, 'hermes', `${session}.jsonl`);
      const lines = () =>
        readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, any>);
      const card = await waitFor('the held card', () => lines().find((e) => e['type'] === 'attention.requested'));
      await d.kill();
      const r = await shim;
      expect([r.code, r.stdout]).toEqual([0, '{}']);
      expect(lines().some((e) => e['subject'] === card['id'] && e['type'] !== 'attention.requested')).toBe(false);

      const again = await startDaemonProcess(GATES, { historyDir: d.historyDir, stateDir: d.stateDir });
      daemons.push(again);
      const closed = await waitFor('the orphan closed', () => lines().find((e) => e['type'] === 'attention.resolved' && e['subject'] === card['id']));
      expect(closed['data']).toEqual({ resolution: 'dismissed' });
      expect(closed['epoch']).toBeGreaterThan(card['epoch']);
      const late = await run(process.execPath, [CLI, 'answer', '--session', session, card['id'], 'allow'], {
        env: { ...process.env, AEP_STATE_DIR: again.stateDir, NO_COLOR: '1' },
        timeout: 30_000,
      }).catch((e: unknown) => e as { code: number; stdout: string });
      expect(late).toMatchObject({ code: 1, stdout: expect.stringMatching(/^rejected: refused/) });
      expect((await again.health()).control_target.dismissed).toBe(1);
    },
    TEST_MS,
  );
});
