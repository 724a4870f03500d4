import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { aepValidator } from '../../support/aep-validator.js';
import { historyEvents } from '../../support/history-lines.js';
import { decodeResourceSpans, type DecodedSpan } from '../../support/otlp-json.js';
import { runShim, startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../../support/processes.js';

/**
 * Sessions Hermes never finalizes (`hermes -z`, a killed Hermes) are ended by the daemon after
 * AEP_SESSION_IDLE_S of silence: a real daemon process, the real shim, a small idle time.
 */

const SENTINEL = 'hermes.observer.v1';
const env = (session: string, hook: string, extra: Record<string, unknown> = {}, tool?: { name: string; input: Record<string, unknown> }) =>
  JSON.stringify({
    hook_event_name: hook,
    tool_name: tool?.name ?? null,
    tool_input: tool?.input ?? null,
    session_id: session,
    cwd: '/home/dev/proj',
    extra: { telemetry_schema_version: SENTINEL, ...extra },
  });

/** what `hermes -z` fires for one turn with a tool call: no on_session_finalize (HERMES.md); `endTurn` false: killed mid-turn */
function oneShot(session: string, endTurn: boolean): string[] {
  const turn = `${session}:task1:aaaa1111`;
  const t = { turn_id: turn, task_id: 'task1' };
  return [
    env(session, 'on_session_start', { model: 'hermes-4', platform: 'cli' }),
    env(session, 'pre_llm_call', { ...t, user_message: 'list files', model: 'hermes-4', platform: 'cli' }),
    env(session, 'pre_tool_call', { ...t, tool_call_id: 'c1' }, { name: 'terminal', input: { command: 'ls' } }),
    env(session, 'post_tool_call', { ...t, tool_call_id: 'c1', status: 'ok', result: '{"output": "a b"}' }, { name: 'terminal', input: {} }),
    ...(endTurn ? [env(session, 'on_session_end', { ...t, completed: true, interrupted: false })] : []),
  ];
}

function spansIn(file: string): DecodedSpan[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => decodeResourceSpans((JSON.parse(l) as { resourceSpans?: unknown[] }).resourceSpans));
}

const daemons: DaemonProcess[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
});

describe('AEP_SESSION_IDLE_S: a session Hermes never finalizes ends', () => {
  it('a one-shot session and a killed one end after the idle time: sessions_active back to 0, the history ends with session.ended, the trace exported', async () => {
    const base = tempDir('hermes-aep-idle-');
    const spansFile = path.join(base, 'spans.jsonl');
    const d = await startDaemonProcess({
      AEP_SESSION_IDLE_S: '1',
      OTEL_TRACES_EXPORTER: 'file',
      AEP_OTEL_FILE: spansFile,
      OTEL_BSP_SCHEDULE_DELAY: '0',
    });
    daemons.push(d);
    const t0 = performance.now();
    for (const [session, endTurn] of [
      ['idle-oneshot', true],
      ['idle-killed', false],
    ] as const) {
      for (const body of oneShot(session, endTurn)) {
        const r = await runShim(body, d.shimEnv);
        expect(r.code).toBe(0);
        expect(r.stdout.trim()).toBe('{}');
      }
    }
    expect((await d.health()).sessions_active).toBe(2);
    const health = await waitFor('sessions_active back to 0', async () => {
      const h = await d.health();
      return h.sessions_active === 0 ? h : undefined;
    });
    console.log(`idle close: both sessions ended ${Math.round(performance.now() - t0)} ms after the first hook (AEP_SESSION_IDLE_S=1)`);
    expect(health.idle_close).toMatchObject({ idle_s: 1, ended: 2 });

    const events = await waitFor('both histories end with session.ended', () => {
      const evs = historyEvents(d.historyDir);
      const last = (s: string) => evs.filter((e) => e.session === s).at(-1);
      return last('idle-oneshot')?.type === 'session.ended' && last('idle-killed')?.type === 'session.ended' ? evs : undefined;
    });
    for (const s of ['idle-oneshot', 'idle-killed']) {
      const own = events.filter((e) => e.session === s);
      const ends = own.filter((e) => e.type === 'session.ended');
      expect(ends).toHaveLength(1);
      expect(ends[0]).toMatchObject({ data: { reason: 'timeout' }, hermesendedby: 'idle' });
    }
    // the killed session's open turn failed `idle` before its end; the finished one-shot turn stays finished
    const killed = events.filter((e) => e.session === 'idle-killed').map((e) => `${e.type}${e.type === 'run.failed' ? `:${e.data.reason}` : ''}`);
    expect(killed.slice(-2)).toEqual(['run.failed:idle', 'session.ended']);
    const oneshot = events.filter((e) => e.session === 'idle-oneshot').map((e) => e.type);
    expect(oneshot.slice(-2)).toEqual(['run.finished', 'session.ended']);
    // every line a valid AEP event
    const validate = aepValidator();
    expect(events.flatMap((e) => validate(e))).toEqual([]);

    // the trace: each turn's root span exported, the killed one with an error status
    const spans = await waitFor('both turns exported', () => {
      const all = spansIn(spansFile).filter((s) => s.name === 'invoke_agent hermes');
      return all.length >= 2 ? all : undefined;
    });
    const runOf = (s: DecodedSpan) => String(s.attributes['aep.run_id']);
    expect(spans.map(runOf).sort()).toEqual(['idle-killed:task1:aaaa1111', 'idle-oneshot:task1:aaaa1111']);
    expect(spans.find((s) => runOf(s).startsWith('idle-killed'))!.status.code).toBe(2);

    // Hermes speaks again for an ended session: a late finalize ends nothing a second time
    expect((await runShim(env('idle-killed', 'on_session_finalize'), d.shimEnv)).code).toBe(0);
    const after = historyEvents(d.historyDir).filter((e) => e.session === 'idle-killed' && e.type === 'session.ended');
    expect(after).toHaveLength(1);
    expect((await d.health()).sessions_active).toBe(0);
  });

  it('after a restart, a session restored from the snapshot still ends: when it was last heard from came back with it', async () => {
    const base = tempDir('hermes-aep-idle-restart-');
    const dirs = { historyDir: path.join(base, 'log'), stateDir: path.join(base, 'state') };
    // an idle time far beyond the test: nothing ends while the first daemon runs
    const first = await startDaemonProcess({ AEP_SESSION_IDLE_S: '3600' }, dirs);
    daemons.push(first);
    for (const body of oneShot('idle-restart', true)) expect((await runShim(body, first.shimEnv)).code).toBe(0);
    expect((await first.health()).sessions_active).toBe(1);
    // the graceful stop writes the snapshot: the lane comes back from it, with when it was last heard from
    expect(await first.stop()).toBe(0);
    daemons.splice(0);
    const second = await startDaemonProcess({ AEP_SESSION_IDLE_S: '1' }, dirs);
    daemons.push(second);
    expect(second.stderr()).toMatch(/"from":"snapshot".*"msg":"state rebuilt"/);
    await waitFor('sessions_active back to 0', async () => ((await second.health()).sessions_active === 0 ? true : undefined));
    const own = await waitFor('the history ends with session.ended', () => {
      const evs = historyEvents(dirs.historyDir).filter((e) => e.session === 'idle-restart');
      return evs.at(-1)?.type === 'session.ended' ? evs : undefined;
    });
    expect(own.filter((e) => e.type === 'session.ended')).toHaveLength(1);
    expect(own.at(-1)).toMatchObject({ type: 'session.ended', data: { reason: 'timeout' }, hermesendedby: 'idle' });
    expect(own.at(-1)!.epoch).toBeGreaterThan(own[0]!.epoch);
  });
});
