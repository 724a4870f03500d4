import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from '../support/paths.js';
import { tempDir } from '../support/processes.js';

/**
 * The shipped deployment configs checked by the real tools: the collector
 * and Jaeger binaries the e2e tier runs, the Compose Specification schema
 * (check-jsonschema, offline) and hadolint. Each tool is also shown a broken
 * copy, so a tool that accepts anything cannot pass here.
 */

interface Run {
  code: number | null;
  output: string;
}

function tool(envName: string): string {
  const bin = process.env[envName];
  if (!bin) throw new Error(`${envName} is not set: run through the vitest "e2e" project (its globalSetup provisions the tools)`);
  return bin;
}

/** Run a tool to completion with the OTel/collector/Jaeger env overrides stripped, so only the files decide. */
function run(bin: string, args: string[], deadlineMs = 60_000): Promise<Run> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(OTEL_|OTELCOL_|JAEGER_)/.test(k)) env[k] = v;
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: ROOT, env: { ...env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), deadlineMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** A copy of a repo file with exact edits; each edit must apply, else the "broken" copy would be the original. */
function brokenCopy(rel: string, ...edits: [from: string, to: string][]): string {
  let text = readFileSync(path.join(ROOT, rel), 'utf8');
  for (const [from, to] of edits) {
    expect(text).toContain(from);
    text = text.replace(from, to);
  }
  const out = path.join(tempDir('hermes-aep-lint-'), path.basename(rel));
  writeFileSync(out, text);
  return out;
}

describe('otel-collector.yaml against the real collector (otelcol validate)', () => {
  it('the shipped config validates', async () => {
    const r = await run(tool('E2E_OTELCOL'), ['validate', '--config', path.join(ROOT, 'otel-collector.yaml')]);
    expect(r, r.output).toMatchObject({ code: 0 });
  });

  it('the shipped config with the e2e logs-to-file overlay validates', async () => {
    const r = await run(tool('E2E_OTELCOL'), [
      'validate',
      '--config',
      path.join(ROOT, 'otel-collector.yaml'),
      '--config',
      path.join(ROOT, 'test', 'e2e', 'otel-logs-file.yaml'),
    ]);
    expect(r, r.output).toMatchObject({ code: 0 });
  });

  it('a copy whose metrics pipeline names an exporter the built binary lacks is rejected', async () => {
    const bad = brokenCopy('otel-collector.yaml', ['exporters: [prometheus]', 'exporters: [prometheusremotewrite]']);
    const r = await run(tool('E2E_OTELCOL'), ['validate', '--config', bad]);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('prometheusremotewrite');
  });

  it('a copy whose pipeline names an undeclared exporter is rejected, for that reason', async () => {
    const bad = brokenCopy('otel-collector.yaml', ['exporters: [otlp_grpc/jaeger, debug]', 'exporters: [otlp_grpc/jaeger, debug, otlp_grpc/undeclared]']);
    const r = await run(tool('E2E_OTELCOL'), ['validate', '--config', bad]);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('otlp_grpc/undeclared');
  });

  it('a copy using a component the built binary does not have is rejected', async () => {
    // valid for the contrib image, but the locally built binary only has what otel/builder-config.yaml lists
    const bad = brokenCopy(
      'otel-collector.yaml',
      ['\nprocessors:\n', '\nprocessors:\n  tail_sampling:\n    decision_wait: 1s\n'],
      ['processors: [memory_limiter, batch]', 'processors: [memory_limiter, tail_sampling, batch]'],
    );
    const r = await run(tool('E2E_OTELCOL'), ['validate', '--config', bad]);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('tail_sampling');
  });
});

describe('test/e2e/jaeger-config.yaml against the real Jaeger (jaeger validate)', () => {
  it('the shipped config validates', async () => {
    const r = await run(tool('E2E_JAEGER'), ['validate', '--config', `file:${path.join(ROOT, 'test', 'e2e', 'jaeger-config.yaml')}`]);
    expect(r, r.output).toMatchObject({ code: 0 });
  });

  it('a copy whose pipeline names an undeclared exporter is rejected', async () => {
    const bad = brokenCopy('test/e2e/jaeger-config.yaml', ['exporters: [jaeger_storage_exporter]', 'exporters: [jaeger_storage_exporter, undeclared]']);
    const r = await run(tool('E2E_JAEGER'), ['validate', '--config', `file:${bad}`]);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('undeclared');
  });
});

describe('docker-compose.yml against the Compose Specification (check-jsonschema, offline)', () => {
  const args = (file: string) => ['--builtin-schema', 'vendor.compose-spec', file];

  it('the shipped file validates', async () => {
    const r = await run(tool('E2E_CHECK_JSONSCHEMA'), args(path.join(ROOT, 'docker-compose.yml')));
    expect(r, r.output).toMatchObject({ code: 0 });
    expect(r.output).toContain('ok');
  });

  it('a copy with a key the spec does not know is rejected, naming it', async () => {
    const bad = brokenCopy('docker-compose.yml', ['    restart: unless-stopped\n', '    restart: unless-stopped\n    restart_policy_typo: always\n']);
    const r = await run(tool('E2E_CHECK_JSONSCHEMA'), args(bad));
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('restart_policy_typo');
  });

  it('a copy with a wrongly typed value is rejected', async () => {
    const bad = brokenCopy('docker-compose.yml', ['mem_limit: 512m', 'mem_limit: [512m]']);
    const r = await run(tool('E2E_CHECK_JSONSCHEMA'), args(bad));
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('mem_limit');
  });
});

describe('Dockerfile against hadolint', () => {
  it('the shipped Dockerfile passes', async () => {
    const r = await run(tool('E2E_HADOLINT'), ['Dockerfile']);
    expect(r, r.output).toMatchObject({ code: 0 });
  });

  it('a copy with an unpinned base image is flagged (DL3006)', async () => {
    const bad = brokenCopy('Dockerfile', ['FROM ${NODE_IMAGE} AS runtime', 'FROM node AS runtime']);
    const r = await run(tool('E2E_HADOLINT'), [bad]);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('DL3006');
  });
});

describe('pinned versions agree across the files that name them', () => {
  const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { image?: string }> };
  const imageTag = (service: string, repo: string): string => {
    const image = compose.services[service]?.image ?? '';
    const m = /^(.+):([^:/]+)$/.exec(image);
    expect(m?.[1], `image of ${service}: ${image}`).toBe(repo);
    return m![2]!;
  };

  it('the collector image tag equals dist.version of otel/builder-config.yaml (and OTELCOL_VERSION of provision-otel.sh)', () => {
    const manifest = parse(readFileSync(path.join(ROOT, 'otel', 'builder-config.yaml'), 'utf8')) as { dist?: { version?: string } };
    const tag = imageTag('otel-collector', 'otel/opentelemetry-collector-contrib');
    expect(tag).toMatch(/^\d+\.\d+\.\d+$/);
    expect(manifest.dist?.version).toBe(tag);
    const script = readFileSync(path.join(ROOT, 'scripts', 'provision-otel.sh'), 'utf8');
    expect(/^OTELCOL_VERSION="([^"]+)"$/m.exec(script)?.[1]).toBe(tag);
  });

  it('the Jaeger image tag equals JAEGER_VERSION of provision-otel.sh', () => {
    const script = readFileSync(path.join(ROOT, 'scripts', 'provision-otel.sh'), 'utf8');
    const tag = imageTag('jaeger', 'jaegertracing/jaeger');
    expect(tag).toMatch(/^\d+\.\d+\.\d+$/);
    expect(/^JAEGER_VERSION="([^"]+)"$/m.exec(script)?.[1]).toBe(tag);
  });

  it('the Prometheus image tag equals v + PROMETHEUS_VERSION of provision-otel.sh, whose Go module version is its v0.3MM.P twin', () => {
    const script = readFileSync(path.join(ROOT, 'scripts', 'provision-otel.sh'), 'utf8');
    const tag = imageTag('prometheus', 'prom/prometheus');
    const version = /^PROMETHEUS_VERSION="([^"]+)"$/m.exec(script)?.[1];
    expect(tag).toBe(`v${version}`);
    const [major, minor, patch] = version!.split('.').map(Number) as [number, number, number];
    expect(major).toBe(3);
    expect(/^PROMETHEUS_MODULE_VERSION="([^"]+)"$/m.exec(script)?.[1]).toBe(`v0.${300 + minor}.${patch}`);
  });

  it('the binaries the e2e tier runs report those versions', async () => {
    const manifest = parse(readFileSync(path.join(ROOT, 'otel', 'builder-config.yaml'), 'utf8')) as { dist: { version: string } };
    const col = await run(tool('E2E_OTELCOL'), ['--version']);
    expect(col.code).toBe(0);
    expect(col.output).toContain(manifest.dist.version);
    const jaeger = await run(tool('E2E_JAEGER'), ['version']);
    expect(jaeger.code).toBe(0);
    expect(jaeger.output).toContain(`v${imageTag('jaeger', 'jaegertracing/jaeger')}`);
    const prometheus = await run(tool('E2E_PROMETHEUS'), ['--version']);
    expect(prometheus.code).toBe(0);
    expect(prometheus.output).toContain(`prometheus, version ${imageTag('prometheus', 'prom/prometheus').slice(1)} `);
    // and it is that release's Go module (the build info go embeds)
    const script = readFileSync(path.join(ROOT, 'scripts', 'provision-otel.sh'), 'utf8');
    const mod = await run('go', ['version', '-m', tool('E2E_PROMETHEUS')]);
    expect(mod.output).toMatch(new RegExp(`\\bmod\\s+github\\.com/prometheus/prometheus\\s+${/^PROMETHEUS_MODULE_VERSION="([^"]+)"$/m.exec(script)?.[1]}\\s`));
  });
});
