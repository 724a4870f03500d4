import { describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../../src/config/config.js';
import { loadOtelConfig } from '../../../exporters/otel/otel-config.js';

describe('settings', () => {
  it('defaults, and empty values read as unset (never 0)', () => {
    const c = loadConfig({ AEP_PORT: '', AEP_CAPTURE: '', AEP_STATE_DIR: '/st' });
    expect([c.host, c.port, c.policy.ceiling, c.policy.categories.attention]).toEqual(['127.0.0.1', undefined, 'metadata', 'redacted']);
    // the Unix socket is the default transport; TCP only with AEP_PORT
    expect([c.socket, c.tokenFile, c.allowedHosts, c.maxBodyNodes]).toEqual(['/st/hook.sock', '/st/hook-token', [], 100_000]);
    const o = loadOtelConfig('/logs', { OTEL_BSP_SCHEDULE_DELAY: '', OTEL_TRACES_EXPORTER: '' });
    expect([o.batch.scheduledDelayMillis, o.exporter, o.file]).toEqual([5000, 'file', '/logs/otel/spans.jsonl']);
  });

  it('AEP_CAPTURE=none silences attention too, unless it is set explicitly', () => {
    expect(loadConfig({ AEP_CAPTURE: 'none' }).policy.categories.attention).toBe('none');
    expect(loadConfig({ AEP_CAPTURE: 'none', AEP_CAPTURE_ATTENTION: 'metadata' }).policy.categories.attention).toBe('metadata');
  });

  it('an endpoint selects OTLP; OTEL_TRACES_EXPORTER wins', () => {
    expect(loadOtelConfig('/l', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).exporter).toBe('otlp');
    expect(loadOtelConfig('/l', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_TRACES_EXPORTER: 'none' }).exporter).toBe('none');
  });

  it('a bad value names the variable and the rule, never echoes the value', () => {
    const secret = 'hunter2-not-a-port';
    try {
      loadConfig({ AEP_PORT: secret });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toContain('AEP_PORT');
      expect((err as Error).message).not.toContain(secret);
    }
    expect(() => loadOtelConfig('/l', { OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/OTEL_TRACES_EXPORTER/);
    expect(() => loadConfig({ AEP_CAPTURE: 'everything' })).toThrow(/AEP_CAPTURE/);
  });
});

describe('transport settings', () => {
  it('AEP_PORT opens TCP; AEP_SOCKET moves or (with TCP) disables the socket; AEP_ALLOWED_HOSTS is a list', () => {
    const c = loadConfig({ AEP_PORT: '8393', AEP_SOCKET: 'off', AEP_ALLOWED_HOSTS: 'hermes-aep, box.lan', AEP_TOKEN_FILE: '/run/secrets/t' });
    expect([c.port, c.socket, c.allowedHosts, c.tokenFile]).toEqual([8393, undefined, ['hermes-aep', 'box.lan'], '/run/secrets/t']);
    expect(loadConfig({ AEP_SOCKET: '/x/y.sock' }).socket).toBe('/x/y.sock');
  });

  it('nothing to listen on, or a socket path too long for the kernel, stops the daemon with the variable named', () => {
    expect(() => loadConfig({ AEP_SOCKET: 'off' })).toThrow(/AEP_SOCKET=off needs AEP_PORT/);
    expect(() => loadConfig({ AEP_STATE_DIR: `/${'d'.repeat(120)}` })).toThrow(/AEP_SOCKET.*107 bytes/);
    expect(() => loadConfig({ AEP_MAX_BODY_NODES: '10' })).toThrow(/AEP_MAX_BODY_NODES/);
  });
});

describe('sampler settings are validated like the rest', () => {
  it('an unknown sampler or an out-of-range ratio stops the daemon with the variable named', () => {
    expect(() => loadOtelConfig('/l', { OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(/OTEL_TRACES_SAMPLER/);
    expect(() => loadOtelConfig('/l', { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
    expect(loadOtelConfig('/l', { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).exporter).toBe('file');
  });
});
