import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { runShim, startDaemonProcess, waitFor, type DaemonProcess } from '../support/processes.js';
import { scriptedSession } from '../support/scripted-session.js';
import { readLogs, streamViolations } from '../support/stream-invariants.js';

/**
 * SIGKILL the daemon in the middle of turn 1 (a tool call open), start a new
 * process on the same log and state dirs, finish the session; then SIGTERM the
 * second process with a long batch delay, so only the shutdown flush can
 * deliver its spans.
 */
describe('a daemon restart mid-turn', () => {
  const script = scriptedSession('20261129_restart_x1');
  const cut = script.envelopes.findIndex((e) => e.hook_event_name === 'pre_tool_call' && e.extra.tool_call_id === 'call_err') + 1;
  const receiver = new OtlpReceiver();
  let a: DaemonProcess;
  let b: DaemonProcess;
  let exitCode: number | null;

  const send = async (d: DaemonProcess, from: number, to: number) => {
    for (const env of script.envelopes.slice(from, to)) {
      const r = await runShim(JSON.stringify(env), d.shimEnv);
      expect(r.stdout).toBe('{}');
    }
  };

  beforeAll(async () => {
    await receiver.start();
    const otel = { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
    a = await startDaemonProcess({ ...otel, OTEL_BSP_SCHEDULE_DELAY: '20' });
    await send(a, 0, cut);
    // what finished before the crash is out (call_ok); turn 1 and call_err are still open
    await waitFor('first tool span exported', async () =>
      (await a.health()).sinks.otel.spans_exported >= 1 && (await a.health()).sinks.log.queued === 0 ? true : undefined,
    );
    await a.kill();
    b = await startDaemonProcess({ ...otel, OTEL_BSP_SCHEDULE_DELAY: '600000' }, { historyDir: a.historyDir, stateDir: a.stateDir });
    await send(b, cut, script.envelopes.length);
    await waitFor('log drained', async () => ((await b.health()).sinks.log.queued === 0 ? true : undefined));
    exitCode = await b.stop();
  });
  afterAll(async () => {
    await a?.kill();
    await b?.kill();
    await receiver.stop();
  });

  const spans = () => receiver.spans;
  const roots = () => spans().filter((s) => !s.parentSpanId);

  it('SIGTERM exits 0 after flushing what the batch delay still held', () => {
    expect(exitCode).toBe(0);
    expect(spans().some((s) => s.name === 'invoke_agent hermes' && s.attributes['aep.run_id'] === script.turns[1])).toBe(true);
  });

  it('one trace per turn, one root each, no orphan root, no duplicate span', () => {
    const ids = spans().map((s) => s.spanId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(roots().map((r) => r.attributes['aep.run_id'])).toEqual(script.turns);
    const traces = new Set(spans().map((s) => s.traceId));
    expect(traces.size).toBe(2);
    for (const t of traces) expect(roots().filter((r) => r.traceId === t)).toHaveLength(1);
  });

  it('the run begun before the crash ends as ONE root with its real start and the tools that ran after', () => {
    const events = readLogs(a.historyDir).get(`${script.session}.jsonl`)!;
    const started = events.find((e) => e.type === 'run.started' && e.run === script.turns[0])!;
    expect(started.epoch).toBe(0);
    const root = roots().find((r) => r.attributes['aep.run_id'] === script.turns[0])!;
    expect(BigInt(root.startTimeUnixNano) / 1_000_000n).toBe(BigInt(Date.parse(started.time)));
    expect(root.attributes['aep.start_unknown']).toBeUndefined();
    expect(root.events.map((e) => e.name)).toEqual(['run.started', 'run.finished']);
    const children = (p: ReceivedSpan) => spans().filter((s) => s.parentSpanId === p.spanId);
    expect(children(root).map((s) => s.attributes['gen_ai.tool.call.id'] ?? s.name)).toEqual(
      expect.arrayContaining(['call_ok', 'call_err', 'call_rm', 'call_ask', 'call_sub']),
    );
    // the tool open across the crash kept its pre-crash start
    const err = spans().find((s) => s.attributes['gen_ai.tool.call.id'] === 'call_err')!;
    const req = events.find((e) => e.type === 'tool.requested' && e.data.tool.call_id === 'call_err')!;
    expect(BigInt(err.startTimeUnixNano) / 1_000_000n).toBe(BigInt(Date.parse(req.time)));
    expect(err.events.map((e) => e.name)).toEqual(['tool.requested', 'tool.failed']);
  });

  it('the new process rebuilt pairing state: every terminal after the restart still finds its start', () => {
    const events = readLogs(a.historyDir).get(`${script.session}.jsonl`)!;
    expect(streamViolations(events, { requireCauses: true })).toEqual([]);
    const failed = events.find((e) => e.type === 'tool.failed' && e.data.tool.call_id === 'call_err')!;
    expect(failed.epoch).toBe(1);
    expect(events.find((e) => e.id === failed.cause)).toMatchObject({ type: 'tool.requested', epoch: 0 });
  });

  it('the new process bumped the epoch and kept the traceparents consistent across it', () => {
    const events = readLogs(a.historyDir).get(`${script.session}.jsonl`)!;
    expect(new Set(events.map((e) => e.epoch))).toEqual(new Set([0, 1]));
    const turn1 = events.filter((e) => e.run === script.turns[0] && e.type.startsWith('run.'));
    expect(turn1.map((e) => e.traceparent)).toEqual([turn1[0]!.traceparent, turn1[0]!.traceparent]);
  });
});
