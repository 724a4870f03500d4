import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseConsumer, WsConsumer } from '../support/aep-stream-client.js';
import { decodeResourceSpans, type DecodedSpan } from '../support/otlp-json.js';
import { ROOT } from '../support/paths.js';
import { httpCall, startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../support/processes.js';

const TOKEN = 'golden-bridge-token-0123456789';
const GOLDEN_TEXT = readFileSync(path.join(ROOT, 'fixtures', 'aep', 'golden', 'golden.jsonl'), 'utf8');
const GOLDEN = GOLDEN_TEXT.split('\n').filter(Boolean);

/**
 * The daemon as an AEP → OpenTelemetry bridge, end to end through the real
 * process: the upstream golden corpus POSTed as one NDJSON batch comes out of
 * the SSE and WebSocket streams byte-identical (AEP-0003 §3.2, §3.3, §3.5, §5),
 * is not taken twice when POSTed again (§5 admission dedupe), survives a
 * kill -9 in the replay buffer (rebuilt from the history), and its units
 * become spans in the file exporter.
 */
describe('the golden corpus POSTed into the real daemon', () => {
  let d: DaemonProcess;
  let spansFile: string;
  const posted: { status: number; body: string }[] = [];
  const post = async () => {
    const r = await httpCall(
      { url: d.url },
      {
        method: 'POST',
        path: '/events',
        headers: { authorization: `Bearer ${TOKEN}`, 'aep-version': '0.1', 'content-type': 'application/x-ndjson' },
        body: GOLDEN_TEXT,
      },
    );
    posted.push({ status: r.status, body: r.body });
  };
  const replayAll = async (): Promise<string[]> => {
    const c = new SseConsumer({ url: d.url }, { token: TOKEN, path: '/stream?from=all&live=0' });
    await c.closed();
    return c.lines();
  };
  const env = () => ({ AEP_TOKEN: TOKEN, OTEL_TRACES_EXPORTER: 'file', AEP_OTEL_FILE: spansFile, OTEL_BSP_SCHEDULE_DELAY: '0' });

  beforeAll(async () => {
    spansFile = path.join(tempDir(), 'spans.jsonl');
    d = await startDaemonProcess(env());
    await post();
  });
  afterAll(async () => {
    await d?.stop();
  });

  it('AEP-0003 §3.2: 202 with every event accepted', () => {
    expect(posted[0]).toEqual({ status: 202, body: JSON.stringify({ accepted: 64, duplicates: 0 }) });
  });

  it('AEP-0003 §3.3, §5: a from=all SSE replay is the corpus, byte for byte, in order; so is a WebSocket replay-all', async () => {
    expect(await replayAll()).toEqual(GOLDEN);
    const ws = await WsConsumer.open(`${d.url.replace('http:', 'ws:')}/socket`, TOKEN);
    ws.send({ type: 'subscribe', id: 'all', filter: {}, from: 'all' });
    await waitFor('ws replay', () => (ws.eventLines().length >= GOLDEN.length ? true : undefined));
    expect(ws.eventLines()).toEqual(GOLDEN);
    ws.close();
  });

  it('AEP-0003 §5: POSTed again, nothing is taken twice (dedupe on (source, id)); the replay is unchanged', async () => {
    await post();
    expect(posted[1]).toEqual({ status: 202, body: JSON.stringify({ accepted: 0, duplicates: 64 }) });
    expect(await replayAll()).toEqual(GOLDEN);
  });

  it('every run and tool unit became its span (the mirror of a foreign emitter)', async () => {
    const spans = (): DecodedSpan[] =>
      existsSync(spansFile)
        ? readFileSync(spansFile, 'utf8')
            .split('\n')
            .filter(Boolean)
            .flatMap((l) => decodeResourceSpans((JSON.parse(l) as { resourceSpans: unknown }).resourceSpans as never))
        : [];
    const run = await waitFor('run r_0042 exported', () =>
      spans().find((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent' && s.attributes['aep.run_id'] === 'r_0042'),
    );
    expect(run.name).toBe('invoke_agent claude-code');
    const tool = await waitFor('tool t_91 exported', () => spans().find((s) => s.attributes['gen_ai.tool.call.id'] === 't_91'));
    expect(tool.name).toBe('execute_tool Bash');
    expect(tool.parentSpanId).toBe(run.spanId);
    expect(tool.traceId).toBe(run.traceId);
    // the events themselves were not stamped: the replay above is the corpus byte for byte
  });

  it('after a kill -9 the replay buffer is rebuilt from the history: the same bytes, each session in its order', async () => {
    await d.kill();
    d = await startDaemonProcess(env(), { historyDir: d.historyDir, stateDir: d.stateDir });
    const after = await replayAll();
    // the history is one file per (agent, session): arrival order ACROSS sessions is not kept, within each it is
    expect([...after].sort()).toEqual([...GOLDEN].sort());
    const bySession = (lines: string[]) => {
      const m = new Map<string, string[]>();
      for (const l of lines) {
        const e = JSON.parse(l) as { agent: string; session?: string };
        const k = `${e.agent} ${e.session ?? ''}`;
        m.set(k, [...(m.get(k) ?? []), l]);
      }
      return m;
    };
    expect(bySession(after)).toEqual(bySession(GOLDEN));
  });
});
