import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startFakeLlm, text, toolCall, type FakeLlm } from './support/fake-llm.js';
import { makeHermesHome, runHermes, type HermesHome } from './support/hermes.js';
import { E2E_HERMES_VERSIONS } from './support/hermes-versions.js';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import { startDaemonProcess, waitFor, type DaemonProcess } from '../support/processes.js';
import { SseConsumer, WsConsumer } from '../support/aep-stream-client.js';

const TOKEN = 'e2e-stream-token-0123456789abcdef';
/** planted in every prompt and tool argument: at the default `metadata` ceiling it must never reach a stream byte */
const PLANT = 'PLANTEDxSTREAMxMARKER';

/** Every history line of the daemon's own (Hermes) sessions, as written. */
function historyLines(d: DaemonProcess): string[] {
  const dir = path.join(d.historyDir, 'hermes');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean));
}

const keyOf = (line: string) => {
  const e = JSON.parse(line) as { source: string; id: string };
  return `${e.source} ${e.id}`;
};
/** at-least-once delivery collapsed the way a consumer must (AEP-0001 §7.4): dedupe on (source, id) */
const dedupe = (lines: readonly string[]) => new Map(lines.map((l) => [keyOf(l), l]));

/**
 * The embedded AEP endpoint with the real Hermes: one SSE consumer and one
 * WebSocket consumer attached before a session receive it live, byte for
 * byte as the history holds it; the daemon is killed with SIGKILL, a turn runs
 * while it is down (the shim spools), the daemon comes back, and the consumers
 * resume: nothing is missing, and what arrives twice is exactly what dedupe
 * on (source, id) collapses (AEP-0003 §3.3, §5, §7).
 */
describe.each(E2E_HERMES_VERSIONS)('real Hermes %s: the live AEP stream, resumed across a kill -9', (version) => {
  let llm: FakeLlm;
  let daemon: DaemonProcess;
  let home: HermesHome;
  const receiver = new OtlpReceiver();
  const sse: SseConsumer[] = [];
  const ws: WsConsumer[] = [];
  let beforeKill: string[] = [];
  let exactTail: { from: string; got: string[] } | undefined;
  let wsExact: { after: number; got: string[] } | undefined;

  const settle = (d: DaemonProcess) =>
    waitFor('daemon drained', async () => {
      const h = await d.health();
      return h.sinks.log.queued === 0 && (h.spool?.pending ?? 0) === 0 ? true : undefined;
    });
  const wsUrl = (d: DaemonProcess) => `${d.url.replace('http:', 'ws:')}/socket`;

  beforeAll(async () => {
    llm = await startFakeLlm({
      steps: [
        { marker: 'MARK-TERMINAL', replies: [toolCall('terminal', { command: `echo ${PLANT}` }, 'call_stream_term')] },
        { marker: 'MARK-FAIL-READ', replies: [toolCall('read_file', { path: `/nonexistent/${PLANT}.txt` }, 'call_stream_read')] },
        { marker: 'MARK-PLAIN', replies: [text(`Plain answer ${PLANT}.`)] },
      ],
      auxiliaryReply: () => 'Fake session title',
    });
    await receiver.start();
    const env = { AEP_TOKEN: TOKEN, OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' };
    daemon = await startDaemonProcess(env);
    home = await makeHermesHome({ modelUrl: llm.url, hookEnv: { AEP_STATE_DIR: daemon.stateDir }, version });

    // attached before the session: live delivery only
    sse.push(new SseConsumer({ url: daemon.url }, { token: TOKEN }));
    ws.push(await WsConsumer.open(wsUrl(daemon), TOKEN));
    ws[0]!.send({ type: 'subscribe', id: 'live', filter: {} });
    await waitFor('subscribed', () => ws[0]!.parsed().some((f) => f.type === 'subscribed') || undefined);

    expect((await runHermes(home, ['-z', `MARK-TERMINAL run it ${PLANT}`])).code).toBe(0);
    await settle(daemon);
    beforeKill = historyLines(daemon);
    await waitFor('both consumers have the first session live', () =>
      sse[0]!.lines().length >= beforeKill.length && ws[0]!.eventLines().length >= beforeKill.length ? true : undefined,
    );

    await daemon.kill();
    await waitFor('the consumers saw the daemon go', () => (sse[0]!.ended && ws[0]!.closed ? true : undefined));
    // a whole turn while the daemon is down: the shim spools every hook
    expect((await runHermes(home, ['-z', `MARK-FAIL-READ read it ${PLANT}`])).code).toBe(0);

    daemon = await startDaemonProcess(env, { historyDir: daemon.historyDir, stateDir: daemon.stateDir });
    await settle(daemon);
    // resume: SSE replays everything held (from=all), the WebSocket too; a third consumer resumes exactly
    sse.push(new SseConsumer({ url: daemon.url }, { token: TOKEN, path: '/stream?from=all' }));
    ws.push(await WsConsumer.open(wsUrl(daemon), TOKEN));
    ws[1]!.send({ type: 'subscribe', id: 'again', filter: {}, from: 'all' });
    const mid = JSON.parse(beforeKill[Math.floor(beforeKill.length / 2)]!) as { session: string; epoch: number; seq: number };
    const midId = `${mid.session}:${mid.epoch}:${mid.seq}`;
    const exact = new SseConsumer({ url: daemon.url }, { token: TOKEN, lastEventId: midId });
    const wsMid = await WsConsumer.open(wsUrl(daemon), TOKEN);
    wsMid.send({ type: 'subscribe', id: 'exact', filter: { session: mid.session }, from: [{ session: mid.session, epoch: mid.epoch, seq: mid.seq }] });

    // and a turn after the restart, live to the resumed consumers
    expect((await runHermes(home, ['chat', '-q', `MARK-PLAIN first ${PLANT}`, '-Q'])).code).toBe(0);
    await settle(daemon);
    const all = historyLines(daemon);
    await waitFor('resumed consumers caught up', () =>
      dedupe(sse[1]!.lines()).size >= all.length && dedupe(ws[1]!.eventLines()).size >= all.length ? true : undefined,
    );
    const wantAfterMid = beforeKill.filter((l) => {
      const e = JSON.parse(l) as { session: string; epoch: number; seq: number };
      return e.session === mid.session && (e.epoch > mid.epoch || (e.epoch === mid.epoch && e.seq > mid.seq));
    });
    await waitFor('exact resumes delivered', () =>
      exact.lines().length >= wantAfterMid.length && wsMid.eventLines().length >= wantAfterMid.length ? true : undefined,
    );
    exactTail = { from: midId, got: exact.lines() };
    wsExact = { after: mid.seq, got: wsMid.eventLines() };
    await exact.close();
    wsMid.close();
  }, 900_000);

  afterAll(async () => {
    for (const s of sse) await s.close();
    for (const w of ws) w.close();
    await daemon?.stop();
    await receiver.stop();
    await llm?.close();
  });

  it('live: both consumers received the first session exactly as the history holds it, in order, with traceparent', () => {
    expect(sse[0]!.status).toBe(200);
    expect(sse[0]!.lines()).toEqual(beforeKill);
    expect(ws[0]!.eventLines()).toEqual(beforeKill);
    for (const m of sse[0]!.messages) {
      const e = JSON.parse(m.data) as { type: string; session: string; epoch: number; seq: number; traceparent?: string };
      expect(m.event).toBe(e.type);
      expect(m.id).toBe(`${e.session}:${e.epoch}:${e.seq}`);
      // the mirror is on: every event of a turn carries its span's context (session events belong to no span)
      if (/^(run|tool|attention)\./.test(e.type)) expect(e.traceparent, e.type).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    }
  });

  it('after the kill -9: no gap (every history event reached each resumed consumer) and nothing beyond what dedupe collapses', () => {
    const all = historyLines(historyDaemon());
    expect(all.length).toBeGreaterThan(beforeKill.length);
    for (const [first, second] of [
      [sse[0]!.lines(), sse[1]!.lines()],
      [ws[0]!.eventLines(), ws[1]!.eventLines()],
    ] as const) {
      const got = dedupe([...first, ...second]);
      expect(new Set(got.keys())).toEqual(new Set(dedupe(all).keys()));
      // byte identity: whatever copy arrived is the history line
      for (const [k, line] of dedupe(all)) expect(got.get(k)).toBe(line);
      // within one delivery, never the same event twice
      expect(dedupe(second).size).toBe(second.length);
    }
  });

  it('Last-Event-ID and subscribe.from resume strictly after the position: the rest of that session, nothing before it', () => {
    const mid = exactTail!.from.split(':');
    const session = mid.slice(0, -2).join(':');
    const want = beforeKill.filter((l) => {
      const e = JSON.parse(l) as { session: string; seq: number };
      return e.session === session && e.seq > Number(mid.at(-1));
    });
    expect(want.length).toBeGreaterThan(0);
    expect(exactTail!.got.filter((l) => (JSON.parse(l) as { session: string }).session === session)).toEqual(want);
    expect(wsExact!.got).toEqual(want);
  });

  it('content above the ceiling (the planted marker in prompts, commands, paths and answers) never reached any stream byte', () => {
    const bytes = [...sse.flatMap((s) => s.lines()), ...ws.flatMap((w) => w.frames)].join('\n');
    expect(bytes.length).toBeGreaterThan(1000);
    expect(bytes).not.toContain(PLANT);
  });

  function historyDaemon(): DaemonProcess {
    return daemon;
  }
});
