/**
 * README, Settings: the shim reads its own few variables by hand, "and a bad value there falls back to the default, since the
 * shim must always answer `{}`". A bad value is one the daemon's reader would refuse (not a whole decimal number: `abc`, `-1`,
 * `1e3`, empty, `0x10`, `1.5`) or one no timer can hold (past 2^31-1 ms, which Node would clamp to 1 ms with a warning on stderr).
 * Run as Hermes runs it: the built shim, a process per hook.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SHIM } from '../../support/paths.js';
import { runShim, tempDir } from '../../support/processes.js';

type Shim = typeof import('../../../src/shim/hook.cjs');
const { shimGates, shimTimeoutMs } = createRequire(import.meta.url)(SHIM) as Shim;

/** nothing listens there: the daemon is down */
const DOWN = 'http://127.0.0.1:9/hook';
const ENVELOPE = '{"hook_event_name":"pre_tool_call","session_id":"s1","extra":{"tool_call_id":"c1"}}';
const NO_GATES = { AEP_HERMES_CONTROL: '', AEP_INSTRUCT: '', AEP_ATTENTION_TIMEOUT_MS: '' };
const NOT_A_NUMBER = ['abc', '-1', '1e3', '', '0x10', '1.5', ' '];
/** past what a Node timer holds (it would fire after 1 ms instead) */
const PAST_TIMERS = '4294967296';

const spooled = (state: string) => (existsSync(path.join(state, 'spool')) ? readdirSync(path.join(state, 'spool')).filter((f) => f.endsWith('.hook')) : []);
const droppedCount = (state: string) => {
  const f = path.join(state, 'spool', 'dropped');
  return existsSync(f) ? statSync(f).size : 0;
};

/** a daemon stand-in that answers `{}` and keeps the hold each request announced */
let peer: Server;
let peerUrl = '';
const holds: (string | undefined)[] = [];
beforeAll(async () => {
  peer = createServer((req, res) => {
    holds.push(req.headers['x-hermes-aep-hold-ms'] as string | undefined);
    req.resume();
    req.on('end', () => res.end('{}'));
  });
  await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
  peerUrl = `http://127.0.0.1:${(peer.address() as { port: number }).port}/hook`;
});
afterAll(async () => {
  await new Promise((r) => peer.close(r));
});

describe('a bad shim setting falls back to its default, and the shim still answers {}', () => {
  it.each([...NOT_A_NUMBER, PAST_TIMERS])('AEP_SHIM_TIMEOUT_MS=%j: the default 5000 ms; daemon down: {}, exit 0, nothing on stderr, spooled', async (v) => {
    expect(shimTimeoutMs({ AEP_SHIM_TIMEOUT_MS: v })).toBe(5_000);
    const state = path.join(tempDir(), 'state');
    const r = await runShim(ENVELOPE, { ...NO_GATES, AEP_HOOK_URL: DOWN, AEP_STATE_DIR: state, AEP_SHIM_TIMEOUT_MS: v });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '{}', '']);
    expect(spooled(state)).toHaveLength(1);
  });

  it('a good AEP_SHIM_TIMEOUT_MS is taken as it is', () => {
    expect(shimTimeoutMs({ AEP_SHIM_TIMEOUT_MS: '400' })).toBe(400);
    expect(shimTimeoutMs({ AEP_SHIM_TIMEOUT_MS: ' 2147483647 ' })).toBe(2_147_483_647);
    expect(shimTimeoutMs({})).toBe(5_000);
  });

  it.each([...NOT_A_NUMBER, PAST_TIMERS])(
    'AEP_ATTENTION_TIMEOUT_MS=%j under the control gate: the default window (55 s + 3 s) is announced; {} and exit 0',
    async (v) => {
      expect(shimGates([], { AEP_ATTENTION_TIMEOUT_MS: v }).holdMs).toBe(58_000);
      holds.length = 0;
      const state = path.join(tempDir(), 'state');
      const r = await runShim(ENVELOPE, { ...NO_GATES, AEP_HERMES_CONTROL: '1', AEP_ATTENTION_TIMEOUT_MS: v, AEP_HOOK_URL: peerUrl, AEP_STATE_DIR: state });
      expect([r.code, r.stdout, r.stderr]).toEqual([0, '{}', '']);
      expect(holds).toEqual(['58000']);
      // and with the daemon down the held hook is spooled as by default
      const down = await runShim(ENVELOPE, { ...NO_GATES, AEP_HERMES_CONTROL: '1', AEP_ATTENTION_TIMEOUT_MS: v, AEP_HOOK_URL: DOWN, AEP_STATE_DIR: state });
      expect([down.code, down.stdout]).toEqual([0, '{}']);
      expect(spooled(state)).toHaveLength(1);
    },
  );

  it('a good AEP_ATTENTION_TIMEOUT_MS is taken as it is', () => {
    expect(shimGates([], { AEP_ATTENTION_TIMEOUT_MS: '1000' }).holdMs).toBe(4_000);
    expect(shimGates(['--attention-timeout-ms', '120000'], {}).holdMs).toBe(123_000);
    expect(shimGates([], {}).holdMs).toBe(58_000);
  });

  it.each(NOT_A_NUMBER)('AEP_SPOOL_MAX_FILES=%j: the default cap (100000), so spooling stays on past a ledger of 1000 files', async (v) => {
    const state = path.join(tempDir(), 'state');
    // the ledger says 1000 files wait: under a cap of 1000 (what `1e3` would be read as) the next hook would be dropped
    mkdirSync(path.join(state, 'spool'), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(state, 'spool', 'in.files'), '.'.repeat(1000), { mode: 0o600 });
    const r = await runShim(ENVELOPE, { ...NO_GATES, AEP_HOOK_URL: DOWN, AEP_STATE_DIR: state, AEP_SPOOL_MAX_FILES: v });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '{}', '']);
    expect([spooled(state).length, droppedCount(state)]).toEqual([1, 0]);
  });

  it.each(NOT_A_NUMBER)('AEP_SPOOL_MAX_BYTES=%j: the default cap (256 MiB), so the hook is spooled', async (v) => {
    const state = path.join(tempDir(), 'state');
    const r = await runShim(ENVELOPE, { ...NO_GATES, AEP_HOOK_URL: DOWN, AEP_STATE_DIR: state, AEP_SPOOL_MAX_BYTES: v });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '{}', '']);
    expect([spooled(state).length, droppedCount(state)]).toEqual([1, 0]);
  });

  it('good spool caps are taken as they are: 0 turns spooling off (the hook is dropped and counted)', async () => {
    const state = path.join(tempDir(), 'state');
    const r = await runShim(ENVELOPE, { ...NO_GATES, AEP_HOOK_URL: DOWN, AEP_STATE_DIR: state, AEP_SPOOL_MAX_FILES: '0' });
    expect([r.code, r.stdout]).toEqual([0, '{}']);
    expect([spooled(state).length, droppedCount(state)]).toEqual([0, 1]);
  });
});
