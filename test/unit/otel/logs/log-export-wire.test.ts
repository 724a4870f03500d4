import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { toLogRecord, type BridgeEvent } from '../../../../src/otel/logs/log-record.js';
import { readSettings } from '../../../../src/daemon/settings.js';
import { silentLogger } from '../../../../src/core/logger.js';
import { startDaemon, type RunningDaemon } from '../../../../src/daemon/main.js';
import { OtlpReceiver } from '../../../support/otlp-receiver.js';
import { httpCall } from '../../../support/processes.js';
import { scriptedSession } from '../../../support/scripted-session.js';

const running: RunningDaemon[] = [];
const receivers: OtlpReceiver[] = [];
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((d) => d.close()));
  await Promise.all(receivers.splice(0).map((r) => r.stop()));
  for (const c of cleanups.splice(0)) c();
});

/** One hook; a 503 while the start-up spool drain runs is retried until a deadline. */
async function post(socketPath: string, body: unknown) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await httpCall({ socketPath }, { method: 'POST', path: '/hook', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (r.status !== 503 || Date.now() > deadline) return r;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Every event of the history, in the order each session's log holds them. */
function history(logDir: string): BridgeEvent[] {
  const dir = path.join(logDir, 'hermes');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .flatMap((f) =>
      readFileSync(path.join(dir, f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as BridgeEvent),
    );
}

describe('the log bridge over real OTLP/HTTP (protobuf), in the daemon', () => {
  it('exports each live event once with the projected fields on the wire; a restart replays the history without re-exporting it', async () => {
    const receiver = await new OtlpReceiver().start();
    receivers.push(receiver);
    const root = mkdtempSync(path.join(os.tmpdir(), 'aep-logs-wire-'));
    // only the generic endpoint: the traces mirror and the log bridge both default to OTLP with it
    const env = {
      AEP_STATE_DIR: path.join(root, 'state'),
      AEP_LOG_DIR: path.join(root, 'logs'),
      AEP_SOCKET: path.join(root, 'h.sock'),
      AEP_FSYNC_INTERVAL_MS: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '0',
      OTEL_BLRP_SCHEDULE_DELAY: '0',
    };
    // the OTLP exporters read their endpoint from the process environment themselves (this file's worker only)
    const saved = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    cleanups.push(() => {
      if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved;
    });
    const session = scriptedSession('20261129_101500_wire01');
    const first = await startDaemon(readSettings(env), silentLogger);
    running.push(first);
    for (const e of session.envelopes.slice(0, 12)) expect((await post(env.AEP_SOCKET, e)).status).toBe(200);
    await first.close();
    const written = history(env.AEP_LOG_DIR);
    expect(written.length).toBeGreaterThan(10);
    expect(receiver.logContentTypes.every((t) => t.startsWith('application/x-protobuf'))).toBe(true);
    expect(receiver.logs.map((l) => l.attributes['aep.event_id'])).toEqual(written.map((ev) => ev.id));

    const withTrace = written.filter((ev) => ev.traceparent !== undefined);
    expect(withTrace.length).toBeGreaterThan(0);
    written.forEach((ev, i) => {
      const want = toLogRecord(ev, 'metadata');
      const got = receiver.logs[i]!;
      expect(got.timeUnixNano).toBe(String(want.time_unix_nano));
      expect(got.eventName).toBe(want.event_name);
      expect([got.severityText, got.severityNumber]).toEqual([want.severity_text, want.severity_number]);
      expect(got.attributes).toEqual(want.attributes);
      expect(got.body).toEqual(want.body);
      expect(got.resource['service.name']).toBe('hermes');
      if (want.trace_id) expect([got.traceId, got.spanId, got.flags]).toEqual([want.trace_id, want.span_id, want.flags]);
      else expect(got.traceId).toBeUndefined();
    });

    // a second process over the same state: it replays the log at start, and exports only what happens now
    const second = await startDaemon(readSettings(env), silentLogger);
    running.push(second);
    for (const e of session.envelopes.slice(12, 14)) expect((await post(env.AEP_SOCKET, e)).status).toBe(200);
    await second.close();
    const now = history(env.AEP_LOG_DIR).slice(written.length);
    expect(now.length).toBeGreaterThan(0);
    expect(receiver.logs.map((l) => l.attributes['aep.event_id'])).toEqual([...written, ...now].map((ev) => ev.id));
  });
});
