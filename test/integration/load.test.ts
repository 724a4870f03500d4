import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'node:http';
import { startDaemonProcess, waitFor, type DaemonProcess } from '../support/processes.js';
import { readLogs, streamViolations } from '../support/stream-invariants.js';
import { SENTINEL } from '../support/scripted-session.js';

/** POST one hook over TCP (with the token) on a shared keep-alive agent; resolves with the status code. */
function post(d: DaemonProcess, agent: Agent, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...d.authHeaders };
    const req = request(d.hookUrl, { method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** 20 sessions × 3 turns × 15 tool calls, interleaved, 64 requests in flight. */
function workload(): string[][] {
  const sessions: string[][] = [];
  for (let s = 0; s < 20; s++) {
    const sid = `load_${s}`;
    const env = (hook: string, extra: Record<string, unknown>, tool: string | null = null) =>
      JSON.stringify({
        hook_event_name: hook,
        tool_name: tool,
        tool_input: tool ? { n: s } : null,
        session_id: sid,
        cwd: '/w',
        extra: { telemetry_schema_version: SENTINEL, ...extra },
      });
    const seq: string[] = [env('on_session_start', {})];
    for (let t = 0; t < 3; t++) {
      const turn = `${sid}:task${t}:0000000${t}`;
      seq.push(env('pre_llm_call', { turn_id: turn, user_message: 'go' }));
      for (let c = 0; c < 15; c++) {
        const id = `c_${t}_${c}`;
        seq.push(env('pre_tool_call', { turn_id: turn, tool_call_id: id }, 'terminal'));
        seq.push(env('post_tool_call', { turn_id: turn, tool_call_id: id, status: c % 5 === 0 ? 'error' : 'ok', result: 'r', duration_ms: 3 }, 'terminal'));
      }
      seq.push(env('on_session_end', { turn_id: turn, completed: true, interrupted: false }));
    }
    seq.push(env('on_session_finalize', {}));
    sessions.push(seq);
  }
  return sessions;
}

describe('correctness under load (the real daemon process, concurrent hooks)', () => {
  let daemon: DaemonProcess;
  const sessions = workload();
  const total = sessions.reduce((n, s) => n + s.length, 0);

  beforeAll(async () => {
    daemon = await startDaemonProcess({ OTEL_TRACES_EXPORTER: 'file' });
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    // each session's hooks stay in order (Hermes fires them one at a time per agent thread);
    // sessions run concurrently, up to 64 requests in flight in all
    const statuses = await Promise.all(
      sessions.map(async (hooks) => {
        const out: number[] = [];
        for (const h of hooks) out.push(await post(daemon, agent, h));
        return out;
      }),
    );
    agent.destroy();
    expect(statuses.flat().every((s) => s === 200)).toBe(true);
    await waitFor('log drained', async () => {
      const h = await daemon.health();
      return h.hooks === total && h.sinks.log.queued === 0 ? h : undefined;
    });
  });
  afterAll(async () => {
    expect(await daemon?.stop()).toBe(0);
  });

  it('every hook became its events, nothing dropped, every session log sound', async () => {
    const h = await daemon.health();
    expect(h.sinks.log).toMatchObject({ dropped: 0, errors: 0 });
    expect(h.identity).toMatchObject({ unpairedTerminals: 0, duplicateTerminals: 0 });
    const logs = readLogs(daemon.historyDir);
    expect(logs.size).toBe(sessions.length);
    let events = 0;
    for (const lane of logs.values()) {
      expect(streamViolations(lane, { requireCauses: true })).toEqual([]);
      expect(lane.map((e) => e.seq)).toEqual(lane.map((_, i) => i));
      events += lane.length;
    }
    expect(events).toBe(h.sinks.log.written);
    expect(h.sinks.otel.spans_finished).toBe(sessions.length * 3 * 16);
  });
});

describe('a full log queue refuses hooks, and counts them (a log queue of one line)', () => {
  it('each hook is recorded (200) or refused unprocessed (503); written = events emitted; refusals counted', async () => {
    const daemon = await startDaemonProcess({ AEP_LOG_QUEUE_MAX: '1' });
    try {
      const agent = new Agent({ keepAlive: true, maxSockets: 32 });
      const hooks = workload().flat().slice(0, 600);
      const statuses = await Promise.all(hooks.map((h) => post(daemon, agent, h)));
      agent.destroy();
      expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
      const refused = statuses.filter((s) => s === 503).length;
      const h = await waitFor('drained', async () => {
        const x = await daemon.health();
        return x.hooks === hooks.length && x.sinks.log.queued === 0 ? x : undefined;
      });
      // a refused hook was not processed: no event, no seq; everything processed was written
      expect(refused).toBeGreaterThan(0);
      expect(h.hooks_refused).toBe(refused);
      expect(h.sinks.log.refused).toBe(refused);
      expect(h.sinks.log.dropped).toBe(0);
      expect(h.sinks.log.written).toBe(h.identity.events);
      // a full queue is load, not a failing disk: /healthz stays ok
      expect(h).toMatchObject({ ok: true, status: 'ok', degraded: [] });
    } finally {
      await daemon.stop();
    }
  });
});
