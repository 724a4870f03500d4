import { chownSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyedSession, postHook } from '../support/hook-client.js';
import { ROOT } from '../support/paths.js';
import { tempDir } from '../support/processes.js';
import { composeImages, dockerEnv, extraCaOverride, parsePs, run, timed, until } from './support.js';

/**
 * The shipped docker-compose.yml, run as a user runs it: `docker compose up -d --build --wait` on our own
 * engine, with every image a local stand-in from `npm run compose:images` (no registry is reachable here)
 * and test/compose/compose.offline.yml as the only override (Grafana left out, the build on the host
 * network). Where the host's TLS egress is re-signed by a local CA (NODE_EXTRA_CA_CERTS), `npm ci` in the
 * build needs that CA: the build gets a one-layer image FROM the node stand-in that adds it, through the
 * Dockerfile's own NODE_IMAGE argument, so the Dockerfile stays the shipped one.
 * The daemon runs as the compose default uid 1000 on a fresh ~/.aep owned by that uid.
 */

const PROJECT = `haep-stack-${process.pid}`;
const DAEMON = 'http://127.0.0.1:8393';
const JAEGER = 'http://127.0.0.1:16686';
const UID = 1000;

describe('compose stack: the shipped docker-compose.yml on local stand-in images', () => {
  let home = '';
  let work = '';
  const files: string[] = [];

  const docker = async (args: string[], timeout = 15 * 60_000): Promise<string> => {
    const { stdout } = await run('docker', args, { env: dockerEnv(home, PROJECT), cwd: ROOT, maxBuffer: 64 * 1024 * 1024, timeout });
    return stdout;
  };
  const compose = (args: string[], timeout?: number) => docker(['compose', ...files.flatMap((f) => ['-f', f]), ...args], timeout);
  const stateDir = () => path.join(home, '.aep', 'state', 'hermes-aep');

  beforeAll(async () => {
    home = tempDir('hermes-aep-stack-home-');
    work = tempDir('hermes-aep-stack-');
    for (const dir of [path.join(home, '.aep', 'logs'), stateDir()]) {
      mkdirSync(dir, { recursive: true });
      chownSync(dir, UID, UID);
    }
    await composeImages();
    files.push(path.join(ROOT, 'docker-compose.yml'), path.join(ROOT, 'test', 'compose', 'compose.offline.yml'));
    const ca = await extraCaOverride(work, ['hermes-aep'], docker);
    if (ca) files.push(ca);
    // a stack left over by an interrupted run of this project name
    await compose(['down', '-v', '--remove-orphans']).catch(() => undefined);
  });

  afterAll(async () => {
    if (home) await compose(['down', '-v', '--remove-orphans']).catch(() => undefined);
    for (const dir of [home, work]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('up -d --build --wait: every service but Grafana healthy (the collector, which has no healthcheck, running)', async () => {
    const t0 = Date.now();
    await compose(['up', '-d', '--build', '--wait']);
    console.log(`[compose] up -d --build --wait to all healthy: ${Date.now() - t0} ms`);

    const ps = parsePs(await compose(['ps', '--format', 'json']));
    expect(ps.map((c) => [c.Service, c.State, c.Health || 'no healthcheck']).sort()).toEqual([
      ['hermes-aep', 'running', 'healthy'],
      ['jaeger', 'running', 'healthy'],
      ['otel-collector', 'running', 'no healthcheck'],
      ['prometheus', 'running', 'healthy'],
    ]);
    // each service runs the stand-in of its official image, not something else of that name
    for (const image of ['jaegertracing/jaeger', 'otel/opentelemetry-collector-contrib', 'prom/prometheus']) {
      const row = ps.find((c) => String(c.Image).startsWith(`${image}:`));
      expect(row, image).toBeDefined();
      const label = await docker(['image', 'inspect', '--format', '{{ index .Config.Labels "org.hermes-aep.stand-in" }}', String(row!.Image)]);
      expect(label.trim()).toBe('true');
    }
  });

  it("the daemon's /healthz answers on its published loopback port; a hook with the token is answered, one without it refused", async () => {
    const health = await fetch(`${DAEMON}/healthz`);
    expect(health.status).toBe(200);

    const tokenFile = path.join(stateDir(), 'hook-token');
    // the daemon in the container created the hook token in the host's state dir, as uid 1000
    expect(statSync(tokenFile).uid).toBe(UID);

    const [first] = keyedSession(`compose-${process.pid}`, 1);
    const withToken = await postHook(`${DAEMON}/hook`, false, first!.body, stateDir());
    expect(withToken.status).toBe(200);

    const without = await postHook(`${DAEMON}/hook`, false, first!.body, path.join(work, 'no-state-dir'));
    expect(without.status).toBe(401);

    // the event reached the history on the host, owned by the container's uid
    const logDir = path.join(home, '.aep', 'logs');
    const file = await until('a history file on the host', async () => {
      const found = readdirSync(logDir, { recursive: true, encoding: 'utf8' }).find((f) => f.endsWith('.jsonl'));
      return found ? path.join(logDir, found) : undefined;
    });
    expect(statSync(file).uid).toBe(UID);
  });

  it("the collector's health_check extension answers inside the project network (the image has no shell to probe itself)", async () => {
    // from the Jaeger stand-in's busybox wget, as any container on the network would reach it
    const out = await compose(['exec', '-T', 'jaeger', 'wget', '-q', '-O', '-', 'http://otel-collector:13133/']);
    expect(out).toMatch(/Server available/);
  });

  it("Jaeger's query API answers on its published loopback port", async () => {
    const res = await fetch(`${JAEGER}/api/services`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: unknown };
    expect(Array.isArray(body.data)).toBe(true);
  });

  it('down -v removes the containers, the network and the named volumes', async () => {
    await timed('docker compose down -v', () => compose(['down', '-v']));
    const label = `label=com.docker.compose.project=${PROJECT}`;
    expect((await docker(['ps', '-aq', '--filter', label])).trim()).toBe('');
    expect((await docker(['volume', 'ls', '-q', '--filter', label])).trim()).toBe('');
  });
});
