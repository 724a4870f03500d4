import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { SpanExporter } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { configError } from '../../support/config-error.js';
import { readSettings } from '../../../src/daemon/settings.js';
import { DeferredExporter } from '../../../src/otel/deferred-exporter.js';
import { createExporter } from '../../../src/otel/exporter-factory.js';
import { loadOtelConfig } from '../../../src/otel/otel-config.js';
import { OTLP_PROTOCOLS } from '../../../src/otel/otel-env.js';

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
const protocolOf = (env: Record<string, string>) => loadOtelConfig('/l', { ...ENDPOINT, ...env }).protocol;

/** The exporter the daemon builds for `env`, its import done (the mirror starts it in the background). */
async function built(env: Record<string, string>): Promise<SpanExporter> {
  const e = await createExporter(loadOtelConfig('/l', { ...ENDPOINT, ...env }));
  expect(e).toBeInstanceOf(DeferredExporter);
  return (e as DeferredExporter).load();
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('OTEL_EXPORTER_OTLP_PROTOCOL / OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', () => {
  it('http/protobuf by default, as the OpenTelemetry spec has it', () => {
    expect(protocolOf({})).toBe('http/protobuf');
    expect(protocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: '', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: '' })).toBe('http/protobuf');
    expect(OTLP_PROTOCOLS).toEqual(['http/protobuf', 'http/json', 'grpc']);
  });

  it('the traces-specific variable wins over the generic one, either way round', () => {
    expect(protocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBe('grpc');
    expect(protocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' })).toBe('http/json');
    expect(protocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' })).toBe('grpc');
    expect(protocolOf({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' })).toBe('http/json');
  });

  it('each value builds the official exporter of its protocol', async () => {
    const cases = [
      [{}, ProtobufExporter],
      [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }, ProtobufExporter],
      [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, JsonExporter],
      [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, GrpcExporter],
      [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }, GrpcExporter],
      [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }, ProtobufExporter],
    ] as const;
    // three different classes, not one under three names
    expect(new Set([ProtobufExporter, JsonExporter, GrpcExporter]).size).toBe(3);
    for (const [env, cls] of cases) {
      const e = await built(env);
      expect(e, JSON.stringify(env)).toBeInstanceOf(cls);
      for (const other of [ProtobufExporter, JsonExporter, GrpcExporter].filter((c) => c !== cls)) expect(e).not.toBeInstanceOf(other);
      await e.shutdown();
    }
  });

  it('the file and none exporters do not depend on the protocol', async () => {
    expect(await createExporter(loadOtelConfig('/l', { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }))).toBeUndefined();
    const file = await createExporter(loadOtelConfig('/l', { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }));
    expect(file?.constructor.name).toBe('FileSpanExporter');
  });

  it('an unknown value stops the start, naming the variable and the three values (never the value)', () => {
    for (const variable of ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']) {
      for (const bad of ['grpc/tls', 'HTTP/PROTOBUF', 'http', ' grpc', 'zipkin']) {
        const err = configError(() => readSettings({ ...ENDPOINT, [variable]: bad }));
        expect(err.variables).toEqual([variable]);
        expect(err.message).toBe(`invalid configuration: ${variable}: one of http/protobuf, http/json, grpc`);
      }
    }
    // refused even where no OTLP exporter would be built: a typo is never left for later
    expect(configError(() => readSettings({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc-web' })).variables).toEqual([
      'OTEL_EXPORTER_OTLP_PROTOCOL',
    ]);
  });

  it('with grpc, a header gRPC metadata cannot carry stops the start (grpc-js would throw while the exporter is built)', async () => {
    for (const variable of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS']) {
      for (const bad of ['x%20tenant=a', 'trace-bin=AAEC', 'x-tenant=%C3%A9t%C3%A9', 'ok=1,Bad%2FKey=2']) {
        const err = configError(() => readSettings({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', [variable]: bad }));
        expect(err.variables).toEqual([variable]);
        expect(err.problems[0]!.rule).toContain('gRPC metadata');
        expect(err.message).not.toContain('tenant');
        // the same header over HTTP is what it was before
        expect(readSettings({ ...ENDPOINT, [variable]: bad }).otel.protocol).toBe('http/protobuf');
      }
    }
    // what the daemon accepts, the exporter builds with (upper-case keys are lower-cased, as gRPC has them)
    const headers = 'Authorization=Bearer%20abc, x-tenant=a.b_c:d';
    expect(readSettings({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_HEADERS: headers }).otel.protocol).toBe('grpc');
    vi.stubEnv('OTEL_EXPORTER_OTLP_HEADERS', headers);
    const e = await built({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect(e).toBeInstanceOf(GrpcExporter);
    await e.shutdown();
  });
});

describe('DeferredExporter: the OTLP exporter is imported once the mirror starts, not while the daemon starts', () => {
  it('imports once, on the first load or export', async () => {
    const inner = { export: vi.fn((_s, done: (r: { code: number }) => void) => done({ code: 0 })), shutdown: vi.fn(async () => undefined) };
    const importer = vi.fn(async () => inner as unknown as SpanExporter);
    const d = new DeferredExporter(importer);
    // nothing to flush or shut down before it was ever loaded: the import is not started for that
    await d.forceFlush();
    await d.shutdown();
    expect(importer).not.toHaveBeenCalled();
    const results = await Promise.all([0, 1].map(() => new Promise((r) => d.export([], r))));
    expect(results).toEqual([{ code: 0 }, { code: 0 }]);
    await d.load();
    expect(importer).toHaveBeenCalledTimes(1);
    await d.shutdown();
    expect(inner.shutdown).toHaveBeenCalledTimes(1);
  });

  it('a failed import fails each export with the error (counted and degraded upstream), and shutdown still resolves', async () => {
    const d = new DeferredExporter(() => Promise.reject(new Error('Cannot find package')));
    const r = await new Promise<{ code: number; error?: Error }>((done) => d.export([], done));
    expect(r.code).toBe(1);
    expect(r.error?.message).toBe('Cannot find package');
    await expect(d.shutdown()).resolves.toBeUndefined();
    await expect(d.forceFlush()).resolves.toBeUndefined();
  });
});
