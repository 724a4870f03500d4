import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/read-env.js';
import { readSettings } from '../../../src/daemon/settings.js';
import { ROOT } from '../../support/paths.js';

/**
 * Every setting docs/reference.md lists, with a value it must refuse and the rule
 * the error must state. Each is read the way the daemon reads them
 * (`readSettings`: the daemon's and the mirror's), alone in the environment.
 */
const BAD: Record<string, [bad: string, rule: string]> = {
  AEP_SOCKET: ['run/hook.sock', 'an absolute path'],
  AEP_PORT: ['70000', 'a whole number from 0 to 65535'],
  AEP_HOST: ['http://box', 'an IP address or a host name'],
  AEP_TOKEN_FILE: ['hook-token', 'an absolute path'],
  AEP_ALLOWED_HOSTS: ['box.lan:8393', 'host names or IP addresses (no ports, no URLs)'],
  AEP_LOG_DIR: ['~/.aep/logs', 'an absolute path (`~` is not expanded)'],
  AEP_STATE_DIR: ['state', 'an absolute path'],
  AEP_CAPTURE: ['everything', 'one of none, metadata, redacted, full'],
  AEP_CAPTURE_ATTENTION: ['Full', 'one of none, metadata, redacted, full'],
  AEP_REDACT_PII: ['maybe', 'one of 1, true, yes, on, 0, false, no, off'],
  AEP_SECRET_NAMES: ['API-KEY', 'environment variable names'],
  AEP_SOURCE_HOST: ['my box', 'letters, digits, dots and dashes'],
  AEP_MAX_BODY_BYTES: ['1000', 'a whole number from 1024 to 1073741824'],
  AEP_MAX_BODY_NODES: ['10', 'a whole number from 1000 to 100000000'],
  AEP_LOG_QUEUE_MAX: ['0', 'a whole number of 1 or more'],
  AEP_FSYNC_INTERVAL_MS: ['-1', 'a whole number from 0 to 3600000'],
  AEP_MAX_SESSIONS: ['1.5', 'a whole number of 1 or more'],
  AEP_DEBUG: ['verbose', 'one of 1, true, yes, on, 0, false, no, off'],
  AEP_START_REFUSED: ['retry', 'one of exit, serve'],
  AEP_WEBHOOK_WINDOW_S: ['5', 'a whole number from 10 to 86400'],
  AEP_REPLAY_WINDOW_MS: ['1h', 'a whole number from 0 to 2592000000'],
  AEP_SNAPSHOT_INTERVAL_MS: ['often', 'a whole number from 0 to 86400000'],
  AEP_RECORD_DIR: ['./recorded', 'an absolute path'],
  AEP_TOKEN: ['short', '16 to 512 printable characters without spaces'],
  AEP_STREAM_READ: ['public', 'one of token, open'],
  AEP_ALLOWED_ORIGINS: ['https://dash.lan/app', 'origins (scheme://host[:port], no path)'],
  AEP_STREAM_BUFFER: ['0', 'a whole number from 1 to 1000000'],
  AEP_STREAM_SESSIONS: ['many', 'a whole number from 1 to 1000000'],
  AEP_STREAM_MAX_BYTES: ['1000', 'a whole number from 1048576 to 68719476736'],
  AEP_STREAM_CLIENT_BYTES: ['1k', 'a whole number from 65536 to 1073741824'],
  AEP_STREAM_SUBSCRIPTIONS: ['0', 'a whole number from 1 to 100000'],
  AEP_STREAM_HEARTBEAT_MS: ['10', 'a whole number from 100 to 3600000'],
  AEP_INGEST_MAX_EVENTS: ['-1', 'a whole number from 1 to 1000000'],
  AEP_RELAY_URL: ['http://relay.lan/socket', 'a ws:// or wss:// URL'],
  AEP_RELAY_OUTBOX: ['none', 'a whole number from 1 to 10000000'],
  AEP_HERMES_CONTROL: ['TRUE', 'one of 1, true, yes, on, 0, false, no, off'],
  AEP_HERMES_GATE_TOOLS: ['(terminal', 'a regular expression (matched against the whole tool name)'],
  AEP_ATTENTION_TIMEOUT_MS: ['290000', 'a whole number from 1000 to 285000'],
  AEP_INSTRUCT: ['sure', 'one of 1, true, yes, on, 0, false, no, off'],
  AEP_PRICES_FILE: ['prices.json', 'an absolute path'],
  OTEL_METRICS_EXPORTER: ['prometheus', 'otlp, console, none'],
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: ['collector:4318/v1/metrics', 'an http:// or https:// URL'],
  OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: ['http/xml', 'one of http/protobuf, http/json, grpc'],
  OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: ['sometimes', 'cumulative, delta, lowmemory'],
  OTEL_METRIC_EXPORT_INTERVAL: ['1m', 'a whole number from 100 to 86400000'],
  OTEL_METRIC_EXPORT_TIMEOUT: ['99', 'a whole number from 100 to 600000'],
  OTEL_TRACES_EXPORTER: ['zipkin', 'otlp, file, none'],
  OTEL_EXPORTER_OTLP_ENDPOINT: ['collector:4318', 'an http:// or https:// URL'],
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: ['ftp://collector/v1/traces', 'an http:// or https:// URL'],
  OTEL_EXPORTER_OTLP_PROTOCOL: ['grpc/json', 'one of http/protobuf, http/json, grpc'],
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: ['http/xml', 'one of http/protobuf, http/json, grpc'],
  OTEL_EXPORTER_OTLP_HEADERS: ['Bearer sk-live-0123456789', 'key=value pairs'],
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: ['authorization=', 'key=value pairs'],
  OTEL_EXPORTER_OTLP_TIMEOUT: ['10s', 'a whole number from 1 to 600000'],
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: ['0', 'a whole number from 1 to 600000'],
  OTEL_EXPORTER_OTLP_COMPRESSION: ['zstd', 'one of gzip, none'],
  OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: ['br', 'one of gzip, none'],
  OTEL_SERVICE_NAME: ['hermes\naep', 'no control characters'],
  OTEL_RESOURCE_ATTRIBUTES: ['team=a=b', "key=value pairs ('=' and ',' percent-encoded"],
  OTEL_TRACES_SAMPLER: ['sometimes', 'one of always_on, always_off, traceidratio, parentbased_always_on'],
  OTEL_TRACES_SAMPLER_ARG: ['2', 'a number from 0 to 1'],
  OTEL_BSP_SCHEDULE_DELAY: ['soon', 'a whole number from 0 to 600000'],
  OTEL_BSP_MAX_QUEUE_SIZE: ['0', 'a whole number from 1 to 1000000'],
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: ['-5', 'a whole number from 1 to 1000000'],
  OTEL_BSP_EXPORT_TIMEOUT: ['50', 'a whole number from 100 to 600000'],
  AEP_OTEL_CAPTURE: ['all', 'one of none, metadata, redacted, full'],
  AEP_OTEL_FILE: ['spans.jsonl', 'an absolute path'],
  AEP_OTEL_IDLE_MS: ['999', 'a whole number from 1000 to 604800000'],
  AEP_OTEL_MAX_OPEN_UNITS: ['9', 'a whole number from 10 to 1000000'],
  AEP_OTEL_SHUTDOWN_TIMEOUT_MS: ['99', 'a whole number from 100 to 120000'],
  OTEL_LOGS_EXPORTER: ['console', 'otlp, none'],
  OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: ['collector:4318/v1/logs', 'an http:// or https:// URL'],
  OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: ['http/xml', 'one of http/protobuf, http/json, grpc'],
  OTEL_EXPORTER_OTLP_LOGS_HEADERS: ['authorization=', 'key=value pairs'],
  OTEL_EXPORTER_OTLP_LOGS_TIMEOUT: ['10s', 'a whole number from 1 to 600000'],
  OTEL_EXPORTER_OTLP_LOGS_COMPRESSION: ['br', 'one of gzip, none'],
  OTEL_BLRP_SCHEDULE_DELAY: ['soon', 'a whole number from 0 to 600000'],
  OTEL_BLRP_MAX_QUEUE_SIZE: ['0', 'a whole number from 1 to 1000000'],
  OTEL_BLRP_MAX_EXPORT_BATCH_SIZE: ['-5', 'a whole number from 1 to 1000000'],
  OTEL_BLRP_EXPORT_TIMEOUT: ['50', 'a whole number from 100 to 600000'],
  AEP_OTEL_LOGS_CAPTURE: ['all', 'one of none, metadata, redacted, full'],
  AEP_SESSION_IDLE_S: ['1h', 'a whole number from 0 to 2592000'],
  AEP_UI: ['yes', 'one of on, off'],
  AEP_UI_JAEGER_URL: ['127.0.0.1:16686', 'an http:// or https:// URL'],
};

/** docs/reference.md's Settings section: each table row's variables, and whether the row is the shim's alone. */
function readmeSettings(): { daemon: Set<string>; shimOnly: Set<string> } {
  const doc = readFileSync(path.join(ROOT, 'docs', 'reference.md'), 'utf8');
  const section = doc.slice(doc.indexOf('\n## Settings'), doc.indexOf('\n## ', doc.indexOf('\n## Settings') + 1));
  const daemon = new Set<string>();
  const shimOnly = new Set<string>();
  for (const row of section.split('\n').filter((l) => l.startsWith('| `'))) {
    const [, names = '', , meaning = ''] = row.split('|');
    for (const name of names.match(/\b(AEP|OTEL)_[A-Z0-9_]+\b/g) ?? []) (/^\s*shim only:/.test(meaning) ? shimOnly : daemon).add(name);
  }
  return { daemon, shimOnly };
}

describe('every setting docs/reference.md lists refuses a bad value, naming the variable and what it accepts', () => {
  it.each(Object.entries(BAD))('%s', (name, [bad, rule]) => {
    let err: unknown;
    try {
      readSettings({ [name]: bad });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const e = err as ConfigError;
    expect(e.variables).toEqual([name]);
    expect(e.message).toContain(`${name}: `);
    expect(e.problems[0]!.rule).toContain(rule);
    // the value itself is never repeated (it may be a secret: a header, a token path)
    if (!e.problems[0]!.rule.includes(bad)) expect(e.message).not.toContain(bad);
  });

  it('the table above is exactly the docs/reference.md settings the daemon reads (the shim-only rows are the shim’s own)', () => {
    const { daemon, shimOnly } = readmeSettings();
    expect([...daemon].sort()).toEqual(Object.keys(BAD).sort());
    // the shim reads its few variables itself, without dependencies (docs/reference.md says why)
    expect([...shimOnly].sort()).toEqual(['AEP_HOOK_URL', 'AEP_SHIM_TIMEOUT_MS', 'AEP_SPOOL_MAX_BYTES', 'AEP_SPOOL_MAX_FILES']);
  });
});

describe('bad settings together: one error names each of them', () => {
  it("a bad generic OTLP variable does not hide a signal's own cross-check (the metrics timeout past its interval)", () => {
    let err: unknown;
    try {
      readSettings({ OTEL_EXPORTER_OTLP_TIMEOUT: '10s', OTEL_METRIC_EXPORT_INTERVAL: '1000', OTEL_METRIC_EXPORT_TIMEOUT: '5000' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect([...(err as ConfigError).variables].sort()).toEqual(['OTEL_EXPORTER_OTLP_TIMEOUT', 'OTEL_METRIC_EXPORT_TIMEOUT']);
  });
});
