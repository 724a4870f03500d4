import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import { runShim, startDaemonProcess, waitFor, type DaemonProcess } from '../support/processes.js';
import { MARKER, scriptedSession } from '../support/scripted-session.js';
import { readLogs } from '../support/stream-invariants.js';

/** A daemon process exporting over OTLP/HTTP to a loopback receiver, driven through the real shim with the scripted session. */
function exportingDaemon(env: Record<string, string>) {
  const ctx = { script: scriptedSession(), receiver: new OtlpReceiver(), daemon: undefined as unknown as DaemonProcess };
  beforeAll(async () => {
    await ctx.receiver.start();
    ctx.daemon = await startDaemonProcess({
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: ctx.receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      ...env,
    });
    for (const e of ctx.script.envelopes) await runShim(JSON.stringify(e), ctx.daemon.shimEnv);
    await waitFor('spans exported', async () => {
      const h = await ctx.daemon.health();
      return h.sinks.otel.spans_exported > 0 && h.sinks.otel.spans_queued === 0 && h.sinks.log.queued === 0 ? h : undefined;
    });
  });
  afterAll(async () => {
    await ctx.daemon?.stop();
    await ctx.receiver.stop();
  });
  return ctx;
}

/**
 * The mirror over REAL OTLP/HTTP to a receiver on loopback, decoded on
 * arrival: with no protocol set (http/protobuf, the OpenTelemetry default)
 * and with http/json. (gRPC goes to the real collector in the e2e tier.)
 */
const HTTP_PROTOCOLS: { protocol: string; env: Record<string, string>; contentType: string; name: string }[] = [
  { protocol: 'http/protobuf', env: {}, contentType: 'application/x-protobuf', name: 'the default, protocol unset' },
  { protocol: 'http/json', env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, contentType: 'application/json', name: 'OTEL_EXPORTER_OTLP_PROTOCOL' },
];
describe.each(HTTP_PROTOCOLS)('OTLP/HTTP export from the daemon process: $protocol ($name)', ({ env, contentType }) => {
  const ctx = exportingDaemon({ OTEL_SERVICE_NAME: 'hermes-aep-test', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=ci', ...env });
  const { script, receiver } = ctx;

  it(`every request is ${contentType}`, () => {
    expect(receiver.contentTypes.length).toBeGreaterThan(0);
    expect(receiver.contentTypes.every((t) => t.startsWith(contentType))).toBe(true);
  });

  it('what arrived decodes to the span tree, with the resource from OTEL_* variables', async () => {
    const h = await ctx.daemon.health();
    expect(receiver.spans).toHaveLength(h.sinks.otel.spans_exported);
    expect(h.sinks.otel).toMatchObject({ exporter: 'otlp', spans_failed: 0, spans_dropped: 0 });
    const roots = receiver.spans.filter((s) => s.name === 'invoke_agent hermes');
    expect(roots.map((r) => r.attributes['aep.run_id'])).toEqual(script.turns);
    for (const s of receiver.spans) {
      expect(s.resource).toMatchObject({ 'service.name': 'hermes-aep-test', 'deployment.environment.name': 'ci' });
      if (s.parentSpanId) expect(receiver.spans.some((p) => p.spanId === s.parentSpanId && p.traceId === s.traceId)).toBe(true);
    }
    expect(
      receiver.spans
        .filter((s) => s.status.code === 2)
        .map((s) => s.attributes['error.type'])
        .sort(),
    ).toEqual(['tool_denied', 'tool_error', 'tool_error']);
  });

  it('the JSONL log carries the same traceparents the spans have', () => {
    const events = readLogs(ctx.daemon.historyDir).get(`${script.session}.jsonl`)!;
    const spanIds = new Set(receiver.spans.map((s) => `${s.traceId}-${s.spanId}`));
    const stamped = events.filter((e) => e.traceparent);
    expect(stamped.length).toBeGreaterThan(30);
    for (const e of stamped) expect(spanIds.has(e.traceparent.slice(3, 52))).toBe(true);
  });

  it('no planted content reaches the wire at the default ceiling', () => {
    for (const b of receiver.bodies) expect(b.toString('utf8')).not.toContain(MARKER);
  });
});

/** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf over OTEL_EXPORTER_OTLP_PROTOCOL=http/json: the traces-specific one is used. */
describe('OTLP/HTTP protobuf export from the daemon process, chosen by the traces-specific variable', () => {
  const ctx = exportingDaemon({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' });
  const { script, receiver } = ctx;

  it('every request is protobuf, and carries the turns’ spans', async () => {
    const h = await ctx.daemon.health();
    expect(h.sinks.otel).toMatchObject({ exporter: 'otlp', spans_failed: 0, spans_dropped: 0 });
    expect(receiver.contentTypes.length).toBeGreaterThan(0);
    expect(receiver.contentTypes.every((t) => t.startsWith('application/x-protobuf'))).toBe(true);
    // protobuf keeps strings as raw UTF-8: the root span name and each turn's run id are in the bytes
    const bytes = Buffer.concat(receiver.bodies).toString('latin1');
    expect(bytes).toContain('invoke_agent hermes');
    for (const run of script.turns) expect(bytes).toContain(run);
    expect(bytes).not.toContain(MARKER);
    expect(receiver.spans).toHaveLength(h.sinks.otel.spans_exported);
  });
});
