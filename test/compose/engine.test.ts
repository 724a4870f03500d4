import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as stringifyYaml } from 'yaml';
import { tempDir } from '../support/processes.js';

/**
 * The compose tier's groundwork: our own engine (test/compose/global-setup.ts) and the Compose plugin run a
 * two-service project the way a user's `docker compose up -d --wait` would, with nothing pulled from a
 * registry: the one image is `docker import`ed from a tarball holding Debian's static busybox.
 * What it proves: healthchecks gate `--wait`, a user-defined network resolves one service from another by
 * name, a port published on 127.0.0.1 answers from the host, `init: true` finds the engine's init, and
 * `down -v` removes the containers, the network and the named volume.
 */

const run = promisify(execFile);
const IMAGE = 'hermes-aep-compose-probe/busybox:local';
const PROJECT = `haep-engine-${process.pid}`;
const APPLETS = ['sh', 'httpd', 'wget', 'cat', 'echo', 'mkdir', 'hostname'];

const dockerEnv = (): NodeJS.ProcessEnv => {
  const host = process.env.COMPOSE_DOCKER_HOST;
  const config = process.env.COMPOSE_DOCKER_CONFIG;
  if (!host || !config) throw new Error('COMPOSE_DOCKER_HOST / COMPOSE_DOCKER_CONFIG unset: run through `npm run test:compose`');
  // the classic builder: BuildKit would pull a frontend image for a `# syntax=` line, and no registry is reachable
  return { ...process.env, DOCKER_HOST: host, DOCKER_CONFIG: config, DOCKER_BUILDKIT: '0' };
};

async function docker(args: string[], cwd?: string): Promise<string> {
  const { stdout } = await run('docker', args, { env: dockerEnv(), cwd, maxBuffer: 16 * 1024 * 1024, timeout: 5 * 60_000 });
  return stdout;
}

async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  const out = await work();
  console.log(`[compose] ${label}: ${Date.now() - t0} ms`);
  return out;
}

/** `docker compose ps --format json` prints one object per line (newer) or one array (older releases). */
function parsePs(stdout: string): Array<Record<string, unknown>> {
  const text = stdout.trim();
  if (!text) return [];
  if (text.startsWith('[')) return JSON.parse(text) as Array<Record<string, unknown>>;
  return text.split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('compose tier groundwork: our engine runs a two-service project offline', () => {
  let dir = '';
  const token = randomBytes(8).toString('hex');

  beforeAll(async () => {
    dir = tempDir('hermes-aep-compose-');
    const rootfs = path.join(dir, 'rootfs');
    mkdirSync(path.join(rootfs, 'bin'), { recursive: true });
    mkdirSync(path.join(rootfs, 'tmp'));
    chmodSync(path.join(rootfs, 'tmp'), 0o1777);
    const busybox = process.env.COMPOSE_BUSYBOX;
    if (!busybox) throw new Error('COMPOSE_BUSYBOX unset: run through `npm run test:compose`');
    copyFileSync(busybox, path.join(rootfs, 'bin', 'busybox'));
    chmodSync(path.join(rootfs, 'bin', 'busybox'), 0o755);
    for (const applet of APPLETS) symlinkSync('busybox', path.join(rootfs, 'bin', applet));
    const tarball = path.join(dir, 'rootfs.tar');
    await run('tar', ['-C', rootfs, '--numeric-owner', '--owner=0', '--group=0', '-cf', tarball, '.']);
    await timed('docker import (busybox rootfs)', () => docker(['import', '-c', 'CMD ["sh"]', tarball, IMAGE]));

    // origin serves a file named by the test's token from a named volume; relay fetches it from `origin` by
    // name over the project network and serves it on a port published on the host's loopback only.
    const health = (port: number) => ({
      test: ['CMD', 'wget', '-q', '-O', '/dev/null', `http://127.0.0.1:${port}/`],
      interval: '1s',
      timeout: '2s',
      retries: 60,
    });
    const compose = {
      name: PROJECT,
      services: {
        origin: {
          image: IMAGE,
          init: true,
          environment: { PROBE_TOKEN: token },
          // `$$`: the shell in the container expands it; a single `$` would be Compose's own interpolation
          command: ['sh', '-c', 'echo "origin:$$PROBE_TOKEN" > /www/index.html && exec httpd -f -p 8080 -h /www'],
          volumes: ['www:/www'],
          networks: ['probe'],
          healthcheck: health(8080),
        },
        relay: {
          image: IMAGE,
          init: true,
          depends_on: { origin: { condition: 'service_healthy' } },
          command: ['sh', '-c', 'mkdir -p /www && wget -q -O /www/index.html http://origin:8080/ && exec httpd -f -p 8081 -h /www'],
          networks: ['probe'],
          ports: ['127.0.0.1::8081'],
          healthcheck: health(8081),
        },
      },
      networks: { probe: {} },
      volumes: { www: {} },
    };
    writeFileSync(path.join(dir, 'compose.yml'), stringifyYaml(compose));
  });

  afterAll(async () => {
    if (!dir) return;
    await docker(['compose', 'down', '-v', '--remove-orphans'], dir).catch(() => undefined);
    await docker(['image', 'rm', IMAGE]).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('up -d --wait: both services healthy, relay reached origin by name, its published loopback port answers', async () => {
    await timed('docker compose up -d --wait', () => docker(['compose', 'up', '-d', '--wait'], dir));

    const ps = parsePs(await docker(['compose', 'ps', '--format', 'json'], dir));
    expect(ps.map((c) => [c.Service, c.State, c.Health]).sort()).toEqual([
      ['origin', 'running', 'healthy'],
      ['relay', 'running', 'healthy'],
    ]);

    const published = (await docker(['compose', 'port', 'relay', '8081'], dir)).trim();
    expect(published).toMatch(/^127\.0\.0\.1:\d+$/);
    const res = await fetch(`http://${published}/`);
    expect(res.status).toBe(200);
    expect((await res.text()).trim()).toBe(`origin:${token}`);

    // `init: true`: PID 1 in the container is the engine's init (tini), not the service's command
    const pid1 = (await docker(['compose', 'exec', '-T', 'origin', 'cat', '/proc/1/cmdline'], dir)).split('\0')[0];
    expect(pid1).toMatch(/init|tini/);
  });

  it('down -v removes the containers, the project network and the named volume', async () => {
    const label = `label=com.docker.compose.project=${PROJECT}`;
    expect((await docker(['volume', 'ls', '-q', '--filter', label])).trim()).not.toBe('');
    await timed('docker compose down -v', () => docker(['compose', 'down', '-v'], dir));
    expect((await docker(['ps', '-aq', '--filter', label])).trim()).toBe('');
    expect((await docker(['network', 'ls', '-q', '--filter', label])).trim()).toBe('');
    expect((await docker(['volume', 'ls', '-q', '--filter', label])).trim()).toBe('');
  });
});
