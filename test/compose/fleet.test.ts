import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/paths.js';
import { tempDir } from '../support/processes.js';
import { composeImages, dockerEnv, extraCaOverride, parsePs, run, timed } from './support.js';

/**
 * The shipped deploy/fleet/docker-compose.yml on the `npm run compose:images` stand-ins, with
 * test/compose/fleet.offline.yml as the only override: three host daemons, the hub, three agent collectors,
 * the load balancer, two gateways and Jaeger come up healthy. What runs through them (sessions from every
 * host, the sampling) is issue 24's next step.
 */

const PROJECT = `haep-fleet-${process.pid}`;
const DAEMONS = ['aep-hub', 'host-1', 'host-2', 'host-3'];
const COLLECTORS = ['agent-1', 'agent-2', 'agent-3', 'gateway-1', 'gateway-2', 'loadbalancer'];
// the published loopback ports of the daemons (the compose file's ports:)
const PUBLISHED: Record<string, number> = { 'aep-hub': 8390, 'host-1': 8391, 'host-2': 8392, 'host-3': 8393 };

describe('compose fleet: the shipped deploy/fleet/docker-compose.yml on local stand-in images', () => {
  let work = '';
  const files: string[] = [];
  // the stream token every daemon of the fleet shares (the compose file refuses to start without one)
  const fleetToken = randomBytes(24).toString('hex');
  const env = () => ({ ...dockerEnv(work, PROJECT), AEP_FLEET_TOKEN: fleetToken });

  const docker = async (args: string[]): Promise<string> => {
    const { stdout } = await run('docker', args, { env: env(), cwd: ROOT, maxBuffer: 64 * 1024 * 1024, timeout: 15 * 60_000 });
    return stdout;
  };
  const compose = (args: string[]) => docker(['compose', ...files.flatMap((f) => ['-f', f]), ...args]);

  beforeAll(async () => {
    work = tempDir('hermes-aep-fleet-');
    await composeImages();
    files.push(path.join(ROOT, 'deploy', 'fleet', 'docker-compose.yml'), path.join(ROOT, 'test', 'compose', 'fleet.offline.yml'));
    const ca = await extraCaOverride(work, DAEMONS, docker);
    if (ca) files.push(ca);
    await compose(['down', '-v', '--remove-orphans']).catch(() => undefined);
  });

  afterAll(async () => {
    if (work) await compose(['down', '-v', '--remove-orphans']).catch(() => undefined);
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('up -d --build --wait: four daemons and Jaeger healthy, six collectors running', async () => {
    const t0 = Date.now();
    await compose(['up', '-d', '--build', '--wait']);
    console.log(`[compose] fleet up -d --build --wait to all healthy: ${Date.now() - t0} ms`);
    const ps = parsePs(await compose(['ps', '--format', 'json']));
    expect(ps.map((c) => [c.Service, c.State, c.Health || 'no healthcheck']).sort()).toEqual(
      [...DAEMONS.map((s) => [s, 'running', 'healthy']), ...COLLECTORS.map((s) => [s, 'running', 'no healthcheck']), ['jaeger', 'running', 'healthy']].sort(),
    );
  });

  it("every collector's health_check answers inside the network, and every daemon's /healthz on its published loopback port", async () => {
    for (const collector of COLLECTORS) {
      const out = await compose(['exec', '-T', 'jaeger', 'wget', '-q', '-O', '-', `http://${collector}:13133/`]);
      expect(out, collector).toMatch(/Server available/);
    }
    for (const daemon of DAEMONS) {
      const res = await fetch(`http://127.0.0.1:${PUBLISHED[daemon]}/healthz`);
      expect(res.status, daemon).toBe(200);
    }
  });

  it('down -v removes the containers and the named volumes', async () => {
    await timed('fleet docker compose down -v', () => compose(['down', '-v']));
    const label = `label=com.docker.compose.project=${PROJECT}`;
    expect((await docker(['ps', '-aq', '--filter', label])).trim()).toBe('');
    expect((await docker(['volume', 'ls', '-q', '--filter', label])).trim()).toBe('');
  });
});
