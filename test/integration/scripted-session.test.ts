import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aepValidator } from '../support/aep-validator.js';
import { runShim, startDaemonProcess, waitFor, type DaemonProcess } from '../support/processes.js';
import { MARKER, scriptedSession } from '../support/scripted-session.js';
import { readLogs, streamViolations, type Ev } from '../support/stream-invariants.js';

/**
 * The foundation's acceptance run: a scripted Hermes session driven through
 * the REAL shim binary against the REAL daemon process, judged by its JSONL log.
 */
describe('scripted session through the shim and daemon', () => {
  const script = scriptedSession();
  let daemon: DaemonProcess;
  let logs: Map<string, Ev[]>;
  const replies: string[] = [];

  beforeAll(async () => {
    daemon = await startDaemonProcess();
    for (const env of script.envelopes) {
      const r = await runShim(JSON.stringify(env), daemon.shimEnv);
      expect(r.code).toBe(0);
      replies.push(r.stdout);
    }
    await waitFor('log drained', async () => {
      const h = await daemon.health();
      return h.hooks === script.envelopes.length && h.sinks.log.queued === 0 ? h : undefined;
    });
    logs = readLogs(daemon.historyDir);
  });
  afterAll(async () => {
    await daemon?.stop();
  });

  const main = () => logs.get(`${script.session}.jsonl`) ?? [];

  it('the shim answers every hook with exactly {} (observe-only)', () => {
    expect(replies).toHaveLength(script.envelopes.length);
    for (const r of replies) expect(r).toBe('{}');
  });

  it('writes the session, its successor and the unknown lane to separate logs', () => {
    expect([...logs.keys()].sort()).toEqual([`${script.session}.jsonl`, `${script.successor}.jsonl`].sort());
  });

  it('every event validates against the envelope and its payload schema', () => {
    const validate = aepValidator();
    for (const events of logs.values()) for (const e of events) expect(validate(e), `${e.type} ${JSON.stringify(e)}`).toEqual([]);
  });

  it('seq strictly increases, causes and subjects resolve, one session.ended after every card closed', () => {
    expect(streamViolations(main(), { requireCauses: true })).toEqual([]);
    const types = main().map((e) => e.type);
    expect(types.filter((t) => t === 'session.ended')).toHaveLength(1);
    expect(types.at(-1)).toBe('session.ended');
    // the hanging clarify card was dismissed right before the end
    expect(main().at(-2)).toMatchObject({ type: 'attention.resolved', data: { resolution: 'dismissed' } });
  });

  it('runs are the real turn ids, closed per turn', () => {
    const runs = main().filter((e) => e.type.startsWith('run.'));
    expect(runs.map((e) => [e.type, e.run])).toEqual([
      ['run.started', script.turns[0]],
      ['run.finished', script.turns[0]],
      ['run.started', script.turns[1]],
      ['run.cancelled', script.turns[1]],
    ]);
  });

  it('approval payloads (session_id "") join the session by session_key and pair post to pre', () => {
    const requested = main().filter((e) => e.type === 'attention.requested' && e.data.kind === 'permission');
    const ids = new Set(requested.map((e) => e.id));
    const cards = main().filter((e) => e.type.startsWith('attention.') && ids.has(e.subject));
    expect(requested).toHaveLength(2);
    const answered = cards.filter((e) => e.type === 'attention.answered');
    expect(answered.map((e) => [e.data.answer.option, e.subject, e.cause])).toEqual([
      ['once', requested[0]!.id, requested[0]!.id],
      ['deny', requested[1]!.id, requested[1]!.id],
    ]);
    const resolved = cards.filter((e) => e.type === 'attention.resolved' && e.data.resolution === 'answered');
    expect(resolved.map((e) => e.cause)).toEqual(answered.map((e) => e.id));
    for (const r of resolved) expect(r.data.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('the clarify card is caused by its tool.requested and answered with the structural choice id', () => {
    const ev = main();
    const card = ev.find((e) => e.type === 'attention.requested' && e.data.kind === 'form')!;
    expect(ev.find((e) => e.id === card.cause)).toMatchObject({ type: 'tool.requested', data: { tool: { call_id: 'call_ask' } } });
    const answer = ev.find((e) => e.type === 'attention.answered' && e.subject === card.id)!;
    expect(answer.data).toEqual({ answer: { values: { '1': '1' } }, via: 'oob' });
  });

  it('the tool trio splits completed / failed / denied and the subagent pair lands on the parent', () => {
    const ev = main();
    expect(ev.filter((e) => e.type === 'tool.failed').map((e) => e.data.error.type)).toEqual(['tool_error', 'tool_error']);
    expect(ev.find((e) => e.type === 'tool.denied')).toMatchObject({ data: { by: 'policy' }, run: script.turns[1] });
    const stopped = ev.find((e) => e.type === 'delegation.subagent.stopped')!;
    expect(ev.find((e) => e.id === stopped.cause)?.type).toBe('delegation.subagent.started');
    expect(stopped.run).toBe(script.turns[0]);
    expect(ev.find((e) => e.type === 'x.hermes.api.error')).toMatchObject({ severity: 'error', data: { status_code: 429 } });
  });

  it('reset rides the vendor plane on the successor, which ends once on finalize', () => {
    const succ = logs.get(`${script.successor}.jsonl`)!;
    expect(succ.map((e) => e.type)).toEqual(['x.hermes.session.reset', 'session.ended']);
  });

  it('no content above the default ceiling reaches the log', () => {
    for (const events of logs.values()) {
      for (const e of events) {
        // attention.* rides at `redacted` (next test); everything else is at `metadata` and must not carry content
        if (!e.type.startsWith('attention.')) expect(JSON.stringify(e)).not.toContain(MARKER);
      }
    }
  });

  it('attention.* rides at redacted: content only as redacted prompt and label text, answers structural, no home path', () => {
    const cards = [...logs.values()].flat().filter((e) => e.type.startsWith('attention.'));
    expect(cards.map((e) => e.type).sort()).toEqual([
      ...Array<string>(3).fill('attention.answered'),
      ...Array<string>(4).fill('attention.requested'),
      ...Array<string>(4).fill('attention.resolved'),
    ]);
    for (const e of cards) {
      expect(e.capture, e.type).toBe('redacted');
      // where the planted content may show: the question or command a human is asked about, as redacted text
      for (const at of pathsHolding(e, MARKER)) expect(at, e.type).toMatch(/^data\.(prompt|fields\.\d+\.label|fields\.\d+\.choices\.\d+\.label)$/);
      expect(JSON.stringify(e)).not.toContain('/home/dev');
    }
    expect(cards.filter((e) => e.type === 'attention.answered').map((e) => e.data.answer)).toEqual([
      { option: 'once' },
      { values: { '1': '1' } },
      { option: 'deny' },
    ]);
  });
});

/** The dotted paths of the strings in `v` that contain `needle`. */
function pathsHolding(v: unknown, needle: string, at = ''): string[] {
  if (typeof v === 'string') return v.includes(needle) ? [at] : [];
  if (typeof v !== 'object' || v === null) return [];
  return Object.entries(v).flatMap(([k, x]) => pathsHolding(x, needle, at ? `${at}.${k}` : k));
}
