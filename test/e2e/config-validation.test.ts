import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ROOT } from '../support/paths.js';
import { tempDir } from '../support/processes.js';
import { JAEGER_COMPOSE_CONFIG, startCollector, stopAllServices, type CollectorOptions } from './support/services.js';

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
      ['\nprocessors:\n', '\nprocessors:\n  groupbytrace:\n    wait_duration: 1s\n'],
      ['processors: [memory_limiter, batch]', 'processors: [memory_limiter, groupbytrace, batch]'],
    );
    const r = await run(tool('E2E_OTELCOL'), ['validate', '--config', bad]);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('groupbytrace');
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

describe('deploy/jaeger/jaeger.yaml (the compose Jaeger, Badger) against the real Jaeger', () => {
  it('the shipped config validates', async () => {
    const r = await run(tool('E2E_JAEGER'), ['validate', '--config', `file:${JAEGER_COMPOSE_CONFIG}`]);
    expect(r, r.output).toMatchObject({ code: 0 });
  });

  it('a copy with a Badger key Jaeger does not know is rejected, naming it', async () => {
    const bad = brokenCopy('deploy/jaeger/jaeger.yaml', ['          ephemeral: false\n', '          ephemeral: false\n          sync_writes: true\n']);
    const r = await run(tool('E2E_JAEGER'), ['validate', '--config', `file:${bad}`]);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('sync_writes');
  });

  it('is the file compose mounts and runs, and the one the restart test runs', () => {
    const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
      services: Record<string, { command?: string[]; volumes?: string[]; environment?: Record<string, string>; healthcheck?: { test?: string[] } }>;
    };
    const jaeger = compose.services.jaeger!;
    expect(jaeger.command?.slice(0, 1)).toEqual(['--config']);
    const inContainer = jaeger.command![1]!;
    const mount = (jaeger.volumes ?? []).map((v) => v.split(':')).find(([, target]) => target === inContainer);
    expect(mount, `a volume mounted at ${inContainer}`).toBeDefined();
    expect(path.resolve(ROOT, mount![0]!)).toBe(JAEGER_COMPOSE_CONFIG);
    expect(mount![2]).toBe('ro');
    const restartTest = readFileSync(path.join(ROOT, 'test', 'e2e', 'jaeger-restart.test.ts'), 'utf8');
    expect(restartTest).toMatch(/config: JAEGER_COMPOSE_CONFIG/);
    // the Badger directory compose sets lies on a named volume (else the data dies with the container)
    const dataDir = jaeger.environment?.JAEGER_BADGER_DIR ?? '';
    const volume = (jaeger.volumes ?? []).map((v) => v.split(':')).find(([src, target]) => !src!.startsWith('.') && `${dataDir}/`.startsWith(`${target}/`));
    expect(volume, `a named volume holding ${dataDir}`).toBeDefined();
    expect(Object.keys((compose as { volumes?: Record<string, unknown> }).volumes ?? {})).toContain(volume![0]);
    // the ports compose relies on are the file's defaults: the healthcheck's, the collector's export target
    const config = readFileSync(JAEGER_COMPOSE_CONFIG, 'utf8');
    const health = /:(\d+)\/status$/.exec(jaeger.healthcheck?.test?.at(-1) ?? '')?.[1];
    expect(config).toContain(`\${env:JAEGER_HEALTH_PORT:-${health}}`);
    const collectorTarget = (compose.services['otel-collector']!.environment ?? {}).OTELCOL_JAEGER_ENDPOINT;
    expect(collectorTarget).toMatch(/^jaeger:\d+$/);
    expect(config).toContain(`\${env:JAEGER_OTLP_GRPC_PORT:-${collectorTarget!.split(':')[1]}}`);
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

// ---------------------------------------------------------------------------
// The fleet tier (deploy/fleet/): collector configs, the compose fleet, the Kubernetes manifests

const FLEET_CONFIGS = ['deploy/fleet/agent.yaml', 'deploy/fleet/loadbalancer.yaml', 'deploy/fleet/gateway.yaml'] as const;
const K8S_DIR = 'deploy/fleet/k8s';
const k8sFiles = () =>
  readdirSync(path.join(ROOT, K8S_DIR))
    .filter((n) => n.endsWith('.yaml'))
    .sort()
    .map((n) => `${K8S_DIR}/${n}`);
const k8sDocs = (): Record<string, any>[] =>
  k8sFiles().flatMap((f) =>
    parseAllDocuments(readFileSync(path.join(ROOT, f), 'utf8'))
      .map((d) => d.toJS() as Record<string, any> | null)
      .filter((d): d is Record<string, any> => d !== null),
  );
/** each ConfigMap's config.yaml written to a temp file, keyed by the ConfigMap's name */
function configMapConfigs(): Map<string, { text: string; file: string }> {
  const out = new Map<string, { text: string; file: string }>();
  const dir = tempDir('hermes-aep-k8s-cm-');
  for (const d of k8sDocs().filter((x) => x.kind === 'ConfigMap')) {
    const text = String(d.data?.['config.yaml'] ?? '');
    const file = path.join(dir, `${d.metadata.name}.yaml`);
    writeFileSync(file, text);
    out.set(d.metadata.name as string, { text, file });
  }
  return out;
}

describe('deploy/fleet collector configs against the real collector (otelcol validate)', () => {
  for (const rel of FLEET_CONFIGS) {
    it(`${rel} validates`, async () => {
      const r = await run(tool('E2E_OTELCOL'), ['validate', '--config', path.join(ROOT, rel)]);
      expect(r, r.output).toMatchObject({ code: 0 });
    });
  }

  // (a misspelt policy *type* passes `validate` in this release and fails only at start: fleet.test.ts starts the gateways)
  it('a gateway copy with a misspelt tail_sampling key is rejected, naming it', async () => {
    const bad = brokenCopy('deploy/fleet/gateway.yaml', ['    decision_wait: ', '    decision_waits: ']);
    const r = await run(tool('E2E_OTELCOL'), ['validate', '--config', bad]);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('decision_waits');
  });

  it('a load-balancer copy with a misspelt key is rejected, naming it', async () => {
    const bad = brokenCopy('deploy/fleet/loadbalancer.yaml', ['    routing_key: traceID\n', '    routing_keys: traceID\n']);
    const r = await run(tool('E2E_OTELCOL'), ['validate', '--config', bad]);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('routing_keys');
  });

  it('every collector config the Kubernetes ConfigMaps hold validates too', async () => {
    const cms = configMapConfigs();
    expect([...cms.keys()].sort()).toEqual(['otel-agent-config', 'otel-gateway-config', 'otel-loadbalancer-config']);
    for (const [name, { file }] of cms) {
      const r = await run(tool('E2E_OTELCOL'), ['validate', '--config', file]);
      expect(r, `${name}: ${r.output}`).toMatchObject({ code: 0 });
    }
  });

  it('the ConfigMaps hold the shipped configs: agent and gateway byte for byte, the load balancer differing only in its resolver', () => {
    const cms = configMapConfigs();
    expect(cms.get('otel-agent-config')?.text).toBe(readFileSync(path.join(ROOT, 'deploy/fleet/agent.yaml'), 'utf8'));
    expect(cms.get('otel-gateway-config')?.text).toBe(readFileSync(path.join(ROOT, 'deploy/fleet/gateway.yaml'), 'utf8'));
    const k8sLb = parse(cms.get('otel-loadbalancer-config')!.text) as Record<string, any>;
    const fileLb = parse(readFileSync(path.join(ROOT, 'deploy/fleet/loadbalancer.yaml'), 'utf8')) as Record<string, any>;
    expect(Object.keys(k8sLb.exporters.load_balancing.resolver)).toEqual(['dns']);
    expect(k8sLb.exporters.load_balancing.resolver.dns.hostname).toContain('otel-gateway-headless.observability.svc');
    expect(Object.keys(fileLb.exporters.load_balancing.resolver)).toEqual(['static']);
    delete k8sLb.exporters.load_balancing.resolver;
    delete fileLb.exporters.load_balancing.resolver;
    expect(k8sLb).toEqual(fileLb);
  });
});

describe('deploy/fleet/docker-compose.yml against the Compose Specification (check-jsonschema, offline)', () => {
  const args = (file: string) => ['--builtin-schema', 'vendor.compose-spec', file];

  it('the shipped file validates', async () => {
    const r = await run(tool('E2E_CHECK_JSONSCHEMA'), args(path.join(ROOT, 'deploy/fleet/docker-compose.yml')));
    expect(r, r.output).toMatchObject({ code: 0 });
    expect(r.output).toContain('ok');
  });

  it('a copy with a key the spec does not know is rejected, naming it', async () => {
    const bad = brokenCopy('deploy/fleet/docker-compose.yml', [
      '  loadbalancer:\n    <<: *collector\n',
      '  loadbalancer:\n    <<: *collector\n    replicas_typo: 2\n',
    ]);
    const r = await run(tool('E2E_CHECK_JSONSCHEMA'), args(bad));
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('replicas_typo');
  });

  it('publishes nothing beyond 127.0.0.1, mounts only files that exist, and relays every host to the hub', () => {
    const compose = parse(readFileSync(path.join(ROOT, 'deploy/fleet/docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { ports?: string[]; volumes?: string[]; environment?: Record<string, string> }>;
    };
    for (const [name, svc] of Object.entries(compose.services)) {
      for (const p of svc.ports ?? []) expect(p, `${name} publishes ${p}`).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
      for (const v of svc.volumes ?? [])
        if (v.startsWith('./')) expect(existsSync(path.join(ROOT, 'deploy/fleet', v.split(':')[0]!)), `${name} mounts ${v}`).toBe(true);
    }
    const hosts = Object.entries(compose.services).filter(([n]) => /^host-\d+$/.test(n));
    expect(hosts.length).toBeGreaterThanOrEqual(2);
    for (const [name, svc] of hosts) {
      expect(svc.environment?.AEP_RELAY_URL, name).toBe('ws://aep-hub:8393/socket');
      // each host's own agent, and that agent exists
      const agent = /^http:\/\/(agent-\d+):4318$/.exec(svc.environment?.OTEL_EXPORTER_OTLP_ENDPOINT ?? '')?.[1];
      expect(agent && compose.services[agent], `${name}'s agent`).toBeTruthy();
    }
    expect(compose.services['aep-hub']?.environment?.OTEL_TRACES_EXPORTER).toBe('none');
  });
});

describe('deploy/fleet/k8s against the official Kubernetes schemas (kubernetes-validate --strict, offline)', () => {
  it('every manifest validates', async () => {
    const files = k8sFiles();
    expect(files.length).toBeGreaterThanOrEqual(4);
    const r = await run(tool('E2E_KUBERNETES_VALIDATE'), ['--strict', ...files.map((f) => path.join(ROOT, f))]);
    expect(r, r.output).toMatchObject({ code: 0 });
    const kinds = k8sDocs().map((d) => `${d.kind}/${d.metadata?.name}`);
    for (const k of kinds) expect(r.output).toContain(`${k.split('/')[0]!.toLowerCase()}/${k.split('/')[1]}`);
  });

  it('a copy with a field the schema does not know is rejected (strict), naming it', async () => {
    const bad = brokenCopy('deploy/fleet/k8s/gateway.yaml', ['  replicas: 2\n', '  replicas: 2\n  replica_count: 2\n']);
    const r = await run(tool('E2E_KUBERNETES_VALIDATE'), ['--strict', bad]);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('replica_count');
  });

  it('a copy with a wrongly typed value is rejected', async () => {
    const bad = brokenCopy('deploy/fleet/k8s/gateway.yaml', ['  replicas: 2\n', "  replicas: 'two'\n"]);
    const r = await run(tool('E2E_KUBERNETES_VALIDATE'), ['--strict', bad]);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain('two');
  });

  it('every collector workload probes the health_check extension, has requests and limits, and mounts its ConfigMap', () => {
    const docs = k8sDocs();
    const configMaps = new Set(docs.filter((d) => d.kind === 'ConfigMap').map((d) => d.metadata.name as string));
    const workloads = docs.filter((d) => ['Deployment', 'DaemonSet'].includes(d.kind as string));
    expect(workloads.map((w) => `${w.kind}/${w.metadata.name}`).sort()).toEqual([
      'DaemonSet/otel-agent',
      'Deployment/otel-gateway',
      'Deployment/otel-loadbalancer',
    ]);
    for (const w of workloads) {
      const spec = w.spec.template.spec;
      const c = spec.containers[0];
      const health = c.ports.find((p: { name: string }) => p.name === 'health');
      expect(health?.containerPort, w.metadata.name).toBe(13133);
      for (const probe of [c.readinessProbe, c.livenessProbe]) expect(probe?.httpGet, w.metadata.name).toMatchObject({ path: '/', port: 'health' });
      expect(c.resources.requests.memory && c.resources.limits.memory && c.resources.requests.cpu && c.resources.limits.cpu, w.metadata.name).toBeTruthy();
      const cm = spec.volumes.find((v: { configMap?: { name: string } }) => v.configMap)?.configMap?.name;
      expect(configMaps.has(cm), `${w.metadata.name} mounts ${cm}`).toBe(true);
    }
  });
});

describe('the fleet pins the same releases as the rest', () => {
  const manifest = parse(readFileSync(path.join(ROOT, 'otel', 'builder-config.yaml'), 'utf8')) as { dist: { version: string } };
  const script = readFileSync(path.join(ROOT, 'scripts', 'provision-otel.sh'), 'utf8');
  const jaegerVersion = /^JAEGER_VERSION="([^"]+)"$/m.exec(script)?.[1];

  it('compose and Kubernetes images: the collector at dist.version, Jaeger at JAEGER_VERSION', () => {
    const compose = parse(readFileSync(path.join(ROOT, 'deploy/fleet/docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { image?: string }>;
    };
    const images = [
      ...Object.values(compose.services).map((s) => s.image ?? ''),
      ...k8sDocs()
        .filter((d) => d.spec?.template)
        .flatMap((d) => d.spec.template.spec.containers.map((c: { image: string }) => c.image)),
    ];
    const collectorImages = images.filter((i) => i.startsWith('otel/'));
    expect(collectorImages.length).toBeGreaterThanOrEqual(4);
    for (const i of collectorImages) expect(i).toBe(`otel/opentelemetry-collector-contrib:${manifest.dist.version}`);
    const jaegerImages = images.filter((i) => i.startsWith('jaegertracing/'));
    expect(jaegerImages).toEqual([`jaegertracing/jaeger:${jaegerVersion}`]);
  });

  it('the manifest has every component the fleet configs use', () => {
    const text = readFileSync(path.join(ROOT, 'otel', 'builder-config.yaml'), 'utf8');
    for (const mod of ['processor/tailsamplingprocessor', 'exporter/loadbalancingexporter', 'processor/resourceprocessor'])
      expect(text).toContain(`github.com/open-telemetry/opentelemetry-collector-contrib/${mod} v${manifest.dist.version}`);
  });
});

// `validate` accepts a deprecated component type silently; the collector names it only when it builds the
// pipelines at start. Each shipped config is started unchanged (its env overrides only) and must not.
describe('the shipped collector configs start without a deprecation warning', () => {
  afterAll(stopAllServices);

  const starts: [label: string, opts: CollectorOptions][] = [
    ['otel-collector.yaml', {}],
    ['otel-collector.yaml + the e2e logs-to-file overlay', { logsFile: true }],
    ['deploy/fleet/agent.yaml', { config: 'deploy/fleet/agent.yaml' }],
    ['deploy/fleet/gateway.yaml', { config: 'deploy/fleet/gateway.yaml' }],
    // a static resolver naming one loopback address nobody serves: the exporter starts, nothing is sent
    ['deploy/fleet/loadbalancer.yaml', { config: 'deploy/fleet/loadbalancer.yaml', env: { FLEET_GATEWAYS: '[127.0.0.1:9]' } }],
  ];
  for (const [label, opts] of starts) {
    it(`${label}: no "deprecated" in the collector's log once it is healthy`, async () => {
      const col = await startCollector({ ...opts, name: `otelcol ${label}` });
      const deprecated = col
        .output()
        .split('\n')
        .filter((l) => /deprecated/i.test(l));
      await col.stop();
      expect(deprecated).toEqual([]);
    });
  }
});
