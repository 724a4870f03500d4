import { describe, expect, it } from 'vitest';
import { loadLogsConfig } from '../../../../src/otel/logs/logs-config.js';
import { readSettings } from '../../../../src/daemon/settings.js';
import { configError } from '../../../support/config-error.js';

describe('the log bridge settings', () => {
  it('off unless an OTLP endpoint is set or OTEL_LOGS_EXPORTER says otlp', () => {
    expect(loadLogsConfig({}).exporter).toBe('none');
    expect(loadLogsConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }).exporter).toBe('otlp');
    expect(loadLogsConfig({ OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: 'http://c:4318/v1/logs' }).exporter).toBe('otlp');
    expect(loadLogsConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_LOGS_EXPORTER: 'none' }).exporter).toBe('none');
    expect(loadLogsConfig({ OTEL_LOGS_EXPORTER: 'OTLP,console' }).exporter).toBe('otlp');
  });

  it('protocol: the logs variable over the generic one, http/protobuf by default', () => {
    expect(loadLogsConfig({}).protocol).toBe('http/protobuf');
    expect(loadLogsConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).protocol).toBe('grpc');
    expect(loadLogsConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'http/json' }).protocol).toBe('http/json');
  });

  it('ceiling: AEP_OTEL_LOGS_CAPTURE, else the spans’ AEP_OTEL_CAPTURE, else metadata', () => {
    expect(loadLogsConfig({}).ceiling).toBe('metadata');
    expect(loadLogsConfig({ AEP_OTEL_CAPTURE: 'redacted' }).ceiling).toBe('redacted');
    expect(loadLogsConfig({ AEP_OTEL_CAPTURE: 'redacted', AEP_OTEL_LOGS_CAPTURE: 'none' }).ceiling).toBe('none');
  });

  it('batch: the OTEL_BLRP_* values, the OpenTelemetry defaults, the batch never above the queue', () => {
    expect(loadLogsConfig({}).batch).toEqual({ scheduledDelayMillis: 1_000, maxQueueSize: 2_048, maxExportBatchSize: 512, exportTimeoutMillis: 30_000 });
    expect(
      loadLogsConfig({
        OTEL_BLRP_SCHEDULE_DELAY: '10',
        OTEL_BLRP_MAX_QUEUE_SIZE: '100',
        OTEL_BLRP_MAX_EXPORT_BATCH_SIZE: '500',
        OTEL_BLRP_EXPORT_TIMEOUT: '2000',
      }).batch,
    ).toEqual({ scheduledDelayMillis: 10, maxQueueSize: 100, maxExportBatchSize: 100, exportTimeoutMillis: 2_000 });
  });

  it.each([
    ['OTEL_LOGS_EXPORTER', 'console'],
    ['OTEL_EXPORTER_OTLP_LOGS_ENDPOINT', 'ftp://c/v1/logs'],
    ['OTEL_EXPORTER_OTLP_LOGS_PROTOCOL', 'thrift'],
    ['OTEL_EXPORTER_OTLP_LOGS_HEADERS', 'novalue'],
    ['OTEL_EXPORTER_OTLP_LOGS_TIMEOUT', '9999999'],
    ['OTEL_EXPORTER_OTLP_LOGS_COMPRESSION', 'brotli'],
    ['AEP_OTEL_LOGS_CAPTURE', 'everything'],
    ['OTEL_BLRP_MAX_QUEUE_SIZE', '9999999'],
    ['OTEL_BLRP_MAX_EXPORT_BATCH_SIZE', 'many'],
    ['OTEL_BLRP_SCHEDULE_DELAY', '-1'],
    ['OTEL_BLRP_EXPORT_TIMEOUT', '1.5'],
  ])('a bad %s stops the start, naming the variable and never the value', (variable, value) => {
    const err = configError(() => readSettings({ [variable]: value }));
    expect(err.variables).toEqual([variable]);
    expect(err.message).not.toContain(value);
  });

  it('with grpc, headers gRPC metadata cannot carry are refused, naming the variable', () => {
    const err = configError(() => loadLogsConfig({ OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_LOGS_HEADERS: 'x-tok-bin=abc' }));
    expect(err.variables).toEqual(['OTEL_EXPORTER_OTLP_LOGS_HEADERS']);
    expect(loadLogsConfig({ OTEL_EXPORTER_OTLP_LOGS_HEADERS: 'x-tok-bin=abc' }).protocol).toBe('http/protobuf');
  });
});
