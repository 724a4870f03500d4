import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { configError } from '../../support/config-error.js';
import { daemonDirectories, readSettings } from '../../../src/daemon/settings.js';
import { loadOtelConfig } from '../../../src/otel/otel-config.js';

describe('settings', () => {
  it('defaults, and empty values read as unset (never 0)', () => {
    const c = loadConfig({ AEP_PORT: '', AEP_CAPTURE: '', AEP_STATE_DIR: '/st' });
    expect([c.host, c.port, c.policy.ceiling, c.policy.categories.attention]).toEqual(['127.0.0.1', undefined, 'metadata', 'redacted']);
    // the Unix socket is the default transport; TCP only with AEP_PORT
    expect([c.socket, c.tokenFile, c.allowedHosts, c.maxBodyNodes]).toEqual(['/st/hook.sock', '/st/hook-token', [], 100_000]);
    const o = loadOtelConfig('/logs', { OTEL_BSP_SCHEDULE_DELAY: '', OTEL_TRACES_EXPORTER: '' });
    expect([o.batch.scheduledDelayMillis, o.exporter, o.file, o.sampler]).toEqual([
      5000,
      'file',
      '/logs/otel/spans.jsonl',
      { name: 'parentbased_always_on', ratio: 1 },
    ]);
  });

  it('AEP_CAPTURE=none silences attention too, unless it is set explicitly', () => {
    expect(loadConfig({ AEP_CAPTURE: 'none' }).policy.categories.attention).toBe('none');
    expect(loadConfig({ AEP_CAPTURE: 'none', AEP_CAPTURE_ATTENTION: 'metadata' }).policy.categories.attention).toBe('metadata');
  });

  it('AEP_SECRET_NAMES takes the values of the variables it names (4 characters or more)', () => {
    const c = loadConfig({ AEP_SECRET_NAMES: 'API_KEY, SHORT,UNSET', API_KEY: 'sk-abcdef', SHORT: 'abc' });
    expect([c.policy.redact.secretNames, c.policy.redact.secretValues]).toEqual([['API_KEY', 'SHORT', 'UNSET'], ['sk-abcdef']]);
  });

  it('an endpoint selects OTLP; OTEL_TRACES_EXPORTER wins (the first of a list, any case)', () => {
    expect(loadOtelConfig('/l', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).exporter).toBe('otlp');
    expect(loadOtelConfig('/l', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://c.example/v1/traces' }).exporter).toBe('otlp');
    expect(loadOtelConfig('/l', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_TRACES_EXPORTER: 'none' }).exporter).toBe('none');
    expect(loadOtelConfig('/l', { OTEL_TRACES_EXPORTER: ' OTLP ,console' }).exporter).toBe('otlp');
  });

  it('the OTLP settings the exporter reads itself pass when well-formed', () => {
    const env = {
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-tenant=a',
      OTEL_EXPORTER_OTLP_TIMEOUT: '10000',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      OTEL_SERVICE_NAME: 'hermes on box-1',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,team=a%3Db',
    };
    expect(loadOtelConfig('/l', env).exporter).toBe('file');
  });

  it('a bad value names the variable and what it accepts, never echoes the value; every bad variable in one error', () => {
    const secret = 'hunter2-not-a-port';
    const err = configError(() => loadConfig({ AEP_PORT: secret, AEP_CAPTURE: 'everything' }));
    expect(err.variables).toEqual(['AEP_PORT', 'AEP_CAPTURE']);
    expect(err.message).toBe('invalid configuration: AEP_PORT: a whole number from 0 to 65535; AEP_CAPTURE: one of none, metadata, redacted, full');
    expect(err.message).not.toContain(secret);
    // the daemon's and the mirror's settings together
    expect(configError(() => readSettings({ AEP_DEBUG: 'loud', OTEL_TRACES_SAMPLER: 'sometimes' })).variables).toEqual(['AEP_DEBUG', 'OTEL_TRACES_SAMPLER']);
    // the mirror's settings are checked even when AEP_LOG_DIR is bad
    expect(configError(() => readSettings({ AEP_LOG_DIR: 'logs', OTEL_BSP_MAX_QUEUE_SIZE: '0' })).variables).toEqual([
      'AEP_LOG_DIR',
      'OTEL_BSP_MAX_QUEUE_SIZE',
    ]);
  });

  it('numbers are decimal digits, not whatever Number() accepts', () => {
    for (const v of ['1e3', '0x10', ' ', '12.0', '+5']) expect(configError(() => loadConfig({ AEP_PORT: v })).variables).toEqual(['AEP_PORT']);
    expect(loadConfig({ AEP_PORT: ' 8393 ' }).port).toBe(8393);
  });
});

describe('transport settings', () => {
  it('AEP_PORT opens TCP; AEP_SOCKET moves or (with TCP) disables the socket; AEP_ALLOWED_HOSTS is a list', () => {
    const c = loadConfig({ AEP_PORT: '8393', AEP_SOCKET: 'off', AEP_ALLOWED_HOSTS: 'hermes-aep, box.lan,[::1]', AEP_TOKEN_FILE: '/run/secrets/t' });
    expect([c.port, c.socket, c.allowedHosts, c.tokenFile]).toEqual([8393, undefined, ['hermes-aep', 'box.lan', '[::1]'], '/run/secrets/t']);
    expect(loadConfig({ AEP_SOCKET: '/x/y.sock' }).socket).toBe('/x/y.sock');
    expect(loadConfig({ AEP_HOST: '::' }).host).toBe('::');
  });

  it('nothing to listen on, or a socket path too long for the kernel, stops the daemon with the variable named', () => {
    expect(() => loadConfig({ AEP_SOCKET: 'off' })).toThrow(/AEP_SOCKET: .*AEP_SOCKET=off needs AEP_PORT/);
    expect(() => loadConfig({ AEP_STATE_DIR: `/${'d'.repeat(120)}` })).toThrow(/AEP_SOCKET: a path of at most 107 bytes/);
  });
});

describe('the directories the settings name', () => {
  it('one per variable that decides one; a default under another is left to it', () => {
    const s = readSettings({ AEP_STATE_DIR: '/st', AEP_LOG_DIR: '/lg', AEP_PORT: '0', AEP_RECORD_DIR: '/rec', AEP_OTEL_FILE: '/sp/spans.jsonl' });
    expect(daemonDirectories(s)).toEqual([
      ['AEP_STATE_DIR', '/st'],
      ['AEP_LOG_DIR', '/lg'],
      ['AEP_SOCKET', '/st'],
      ['AEP_TOKEN_FILE', '/st'],
      ['AEP_RECORD_DIR', '/rec'],
      ['AEP_OTEL_FILE', '/sp'],
    ]);
    // no TCP: no token file; no file exporter: no span file
    expect(daemonDirectories(readSettings({ AEP_STATE_DIR: '/st', AEP_LOG_DIR: '/lg', OTEL_TRACES_EXPORTER: 'none' }))).toEqual([
      ['AEP_STATE_DIR', '/st'],
      ['AEP_LOG_DIR', '/lg'],
      ['AEP_SOCKET', '/st'],
    ]);
  });
});
