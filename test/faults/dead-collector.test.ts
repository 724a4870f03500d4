import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyedSession, postHook } from '../support/hook-client.js';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import { startDaemonProcess, waitFor, type DaemonProcess } from '../support/processes.js';

const FAILING = 'spans cannot be exported';
const RECOVERED = 'spans are exported again';

const stderrLines = (d: DaemonProcess, msg: string) =>
  d
    .stderr()
    .split('\n')
    .filter((l) => l.includes(msg));

async function healthz(d: DaemonProcess): Promise<{ status: number; body: Record<string, any> }> {
  const r = await fetch(`${d.url}/healthz`);
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

/**
 * The OTLP endpoint is unreachable (nothing listens on its port): /healthz says
 * degraded (HTTP 503) with the reason, ONE stderr line says so, hooks are still
 * answered and recorded (the mirror is not durable: never waited on). When a
 * collector comes back on that port, the next export succeeds: one recovery line.
 */
describe('a dead collector is loud once, and recovery too', () => {
  const receiver = new OtlpReceiver();
  let daemon: DaemonProcess;
  let port = 0;
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });

  const session = async (sid: string) => {
    const statuses: number[] = [];
    for (const h of keyedSession(sid, 3)) statuses.push((await postHook(daemon.hookUrl, agent, h.body, daemon.stateDir)).status);
    return statuses;
  };

  beforeAll(async () => {
    // a port where a collector was and is no more
    await receiver.start();
    port = Number(new URL(receiver.url).port);
    await receiver.stop();
    daemon = await startDaemonProcess({
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_TIMEOUT: '500',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
  });
  afterAll(async () => {
    agent.destroy();
    await daemon?.stop();
    await receiver.stop();
  });

  it('starts ok', async () => {
    expect(await healthz(daemon)).toMatchObject({ status: 200, body: { ok: true, status: 'ok', degraded: [] } });
  });

  it('export failing: hooks still answered 200 and recorded; /healthz degraded (503) with the reason; one stderr line', async () => {
    expect(await session('dead_1')).toEqual(Array(10).fill(200));
    const h = await waitFor('degraded', async () => {
      const x = await healthz(daemon);
      return x.status === 503 ? x : undefined;
    });
    expect(h.body).toMatchObject({ ok: false, status: 'degraded' });
    expect(h.body.degraded).toEqual([{ sink: 'otel', reason: expect.stringMatching(/^otel export failed: /), since: expect.any(String) }]);
    expect(h.body.sinks.otel.spans_failed).toBeGreaterThan(0);
    // more failing exports in the same episode: still one line, never one per span or hook
    expect(await session('dead_2')).toEqual(Array(10).fill(200));
    await waitFor('second batch failed', async () => ((await healthz(daemon)).body.sinks.otel.spans_failed >= 8 ? true : undefined));
    expect(stderrLines(daemon, FAILING)).toHaveLength(1);
    expect(JSON.parse(stderrLines(daemon, FAILING)[0]!)).toMatchObject({
      level: 'error',
      sink: 'otel',
      reason: expect.stringMatching(/^otel export failed: /),
    });
    expect(stderrLines(daemon, RECOVERED)).toHaveLength(0);
    // the durable log never waited on export and holds every event
    expect((await healthz(daemon)).body.sinks.log).toMatchObject({ written: 20, dropped: 0 });
  });

  it('the collector comes back: the next export succeeds, /healthz ok (200), one recovery line', async () => {
    await receiver.start(port);
    expect(await session('alive_1')).toEqual(Array(10).fill(200));
    const h = await waitFor('recovered', async () => {
      const x = await healthz(daemon);
      return x.status === 200 ? x : undefined;
    });
    expect(h.body).toMatchObject({ ok: true, status: 'ok', degraded: [] });
    expect(receiver.spans.some((s) => s.attributes['gen_ai.conversation.id'] === 'alive_1')).toBe(true);
    expect(stderrLines(daemon, RECOVERED)).toHaveLength(1);
    expect(stderrLines(daemon, FAILING)).toHaveLength(1);
  });
});
