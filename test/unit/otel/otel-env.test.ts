import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadLogsConfig } from '../../../src/otel/logs/logs-config.js';
import { loadMetricsConfig } from '../../../src/otel/metrics/metrics-config.js';
import { loadOtelConfig } from '../../../src/otel/otel-config.js';
import { OTLP_PROTOCOLS, otlpVariables, readSignalSettings, SIGNALS, type Signal } from '../../../src/otel/otel-env.js';
import { configError } from '../../support/config-error.js';

const own = (signal: Signal, setting: Parameters<typeof otlpVariables>[1]) => otlpVariables(signal, setting)[0];
const GENERIC = 'OTEL_EXPORTER_OTLP_ENDPOINT';

describe('the variable names', () => {
  it('are the specification’s, the signal in upper case between OTLP and the setting', () => {
    expect(otlpVariables('traces', 'ENDPOINT')).toEqual(['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT']);
    expect(otlpVariables('metrics', 'HEADERS')).toEqual(['OTEL_EXPORTER_OTLP_METRICS_HEADERS', 'OTEL_EXPORTER_OTLP_HEADERS']);
    expect(otlpVariables('logs', 'COMPRESSION')).toEqual(['OTEL_EXPORTER_OTLP_LOGS_COMPRESSION', 'OTEL_EXPORTER_OTLP_COMPRESSION']);
  });
});

describe('signalSettings: one signal’s OTLP exporter settings', () => {
  it.each(SIGNALS)('%s: the specification’s defaults with nothing set', (signal) => {
    expect(readSignalSettings({}, signal)).toEqual({
      signal,
      protocol: 'http/protobuf',
      endpointSet: false,
      endpoint: `http://localhost:4318/v1/${signal}`,
      headers: {},
      timeoutMs: 10_000,
      compression: 'none',
    });
    expect(readSignalSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, signal).endpoint).toBe('http://localhost:4317');
  });

  it('the generic endpoint gets v1/<signal> over HTTP (one slash between), as written over gRPC; the signal’s own is used as written', () => {
    expect(readSignalSettings({ [GENERIC]: 'http://c:4318' }, 'traces').endpoint).toBe('http://c:4318/v1/traces');
    expect(readSignalSettings({ [GENERIC]: 'https://c.example/otlp/' }, 'metrics').endpoint).toBe('https://c.example/otlp/v1/metrics');
    expect(readSignalSettings({ [GENERIC]: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, 'logs').endpoint).toBe('http://c:4318/v1/logs');
    expect(readSignalSettings({ [GENERIC]: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'logs').endpoint).toBe('http://c:4317');
    expect(readSignalSettings({ [GENERIC]: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9/custom' }, 'traces').endpoint).toBe(
      'http://t:9/custom',
    );
    // another signal's own endpoint is not this one's
    expect(readSignalSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9/custom' }, 'logs')).toMatchObject({
      endpointSet: false,
      endpoint: 'http://localhost:4318/v1/logs',
    });
  });

  it('headers: percent-decoded pairs, the generic ones then the signal’s own (a key in both takes the signal’s value)', () => {
    const env = { OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-tenant=a', OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'x-tenant=m,x-extra=1' };
    expect(readSignalSettings(env, 'metrics').headers).toEqual({ authorization: 'Bearer abc', 'x-tenant': 'm', 'x-extra': '1' });
    expect(readSignalSettings(env, 'traces').headers).toEqual({ authorization: 'Bearer abc', 'x-tenant': 'a' });
  });

  it('a bad variable is a ConfigError naming it; with gRPC, headers metadata cannot carry are refused', () => {
    expect(configError(() => readSignalSettings({ OTEL_EXPORTER_OTLP_LOGS_TIMEOUT: '0' }, 'logs')).variables).toEqual(['OTEL_EXPORTER_OTLP_LOGS_TIMEOUT']);
    expect(configError(() => readSignalSettings({ OTEL_EXPORTER_OTLP_COMPRESSION: 'zstd' }, 'traces')).variables).toEqual(['OTEL_EXPORTER_OTLP_COMPRESSION']);
    expect(configError(() => readSignalSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'c:4318' }, 'traces')).variables).toEqual([
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    ]);
    const grpc = { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_HEADERS: 'x-tok-bin=abc', OTEL_EXPORTER_OTLP_LOGS_HEADERS: 'Bad%20Key=v' };
    expect(configError(() => readSignalSettings(grpc, 'logs')).variables).toEqual(['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_LOGS_HEADERS']);
    // the same headers over HTTP are what the HTTP exporter sends
    expect(readSignalSettings({ ...grpc, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, 'logs').headers).toEqual({ 'x-tok-bin': 'abc', 'Bad Key': 'v' });
  });
});

/** Any subset of the ten variables of `signal` (and of another signal's own, which must not count), with valid values. */
const envFor = (signal: Signal) => {
  const other = SIGNALS.find((s) => s !== signal)!;
  const value = {
    ENDPOINT: fc.constantFrom('http://a:4318', 'https://b.example/otlp/', 'http://c:1/x/y'),
    PROTOCOL: fc.constantFrom(...OTLP_PROTOCOLS),
    HEADERS: fc.constantFrom('k=1', 'k=2,j=3', 'authorization=Bearer%20x'),
    TIMEOUT: fc.integer({ min: 1, max: 600_000 }).map(String),
    COMPRESSION: fc.constantFrom('gzip', 'none'),
  } as const;
  const entries = (Object.keys(value) as (keyof typeof value)[]).flatMap((setting) => {
    const [mine, generic] = otlpVariables(signal, setting);
    return [
      [mine, value[setting]],
      [generic, value[setting]],
      [otlpVariables(other, setting)[0], value[setting]],
    ] as const;
  });
  return fc.record(Object.fromEntries(entries), { requiredKeys: [] });
};

describe('signalSettings, for any environment', () => {
  it.each(SIGNALS)('%s: each setting is the signal’s variable if set, else the generic one, else the default', (signal) => {
    fc.assert(
      fc.property(envFor(signal), (env) => {
        const s = readSignalSettings(env, signal);
        const pick = (setting: Parameters<typeof otlpVariables>[1]) => env[own(signal, setting)] ?? env[otlpVariables(signal, setting)[1]];
        expect(s.protocol).toBe(pick('PROTOCOL') ?? 'http/protobuf');
        expect(s.timeoutMs).toBe(Number(pick('TIMEOUT') ?? 10_000));
        expect(s.compression).toBe(pick('COMPRESSION') ?? 'none');
        expect(s.endpointSet).toBe(pick('ENDPOINT') !== undefined);
        const mine = env[own(signal, 'ENDPOINT')];
        const generic = env[GENERIC];
        if (mine !== undefined) expect(s.endpoint).toBe(mine);
        else if (s.protocol === 'grpc') expect(s.endpoint).toBe(generic ?? 'http://localhost:4317');
        else {
          expect(s.endpoint.endsWith(`/v1/${signal}`)).toBe(true);
          expect(s.endpoint).not.toContain(`//v1/`);
          expect(s.endpoint.startsWith(generic ?? 'http://localhost:4318')).toBe(true);
        }
        // every signal-specific header wins; every generic one not overridden stays
        const own_ = new Map(
          (env[own(signal, 'HEADERS')] ?? '')
            .split(',')
            .filter(Boolean)
            .map((p) => p.split('=') as [string, string]),
        );
        for (const [k, v] of own_) expect(s.headers[k]).toBe(decodeURIComponent(v));
        for (const p of (env.OTEL_EXPORTER_OTLP_HEADERS ?? '').split(',').filter(Boolean)) {
          const [k = '', v = ''] = p.split('=');
          if (!own_.has(k)) expect(s.headers[k]).toBe(decodeURIComponent(v));
        }
      }),
    );
  });

  it('each signal’s config takes its protocol and its exporter default from the reader', () => {
    fc.assert(
      fc.property(envFor('traces'), envFor('metrics'), envFor('logs'), (t, m, l) => {
        // headers that gRPC cannot carry are out of this property's range (they stop the start with grpc)
        const env = { ...t, ...m, ...l };
        const traces = readSignalSettings(env, 'traces');
        const metrics = readSignalSettings(env, 'metrics');
        const logs = readSignalSettings(env, 'logs');
        const o = loadOtelConfig('/l', env);
        expect([o.protocol, o.exporter]).toEqual([traces.protocol, traces.endpointSet ? 'otlp' : 'file']);
        const lc = loadLogsConfig(env);
        expect([lc.protocol, lc.exporter]).toEqual([logs.protocol, logs.endpointSet ? 'otlp' : 'none']);
        const mc = loadMetricsConfig(env);
        expect([mc.protocol, mc.exporter]).toEqual([metrics.protocol, metrics.endpointSet ? 'otlp' : 'none']);
      }),
    );
  });
});
