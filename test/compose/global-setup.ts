import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../support/paths.js';

const run = promisify(execFile);

/** Run one script; its `NAME=value` lines come back as a map. */
async function script(name: string, args: string[] = []): Promise<Map<string, string>> {
  const t0 = Date.now();
  const { stdout } = await run('bash', [path.join(ROOT, 'scripts', name), ...args], {
    env: process.env,
    maxBuffer: 16 * 1024 * 1024,
    timeout: 30 * 60_000,
  });
  const out = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const m = /^([A-Z][A-Z0-9_]*)=(.+)$/.exec(line.trim());
    if (m) out.set(m[1]!, m[2]!);
  }
  console.log(`[compose] ${[name, ...args].join(' ')}: ${Date.now() - t0} ms`);
  return out;
}

function required(vars: Map<string, string>, key: string, from: string): string {
  const value = vars.get(key);
  if (!value) throw new Error(`${from} printed no ${key}= line`);
  return value;
}

/**
 * The compose tier's engine: Debian's docker.io installed if missing (scripts/provision-docker.sh), the
 * Compose plugin built once into the provisioning cache (scripts/provision-compose.sh), and OUR OWN dockerd
 * (scripts/dockerd.sh: own data root, socket and pidfile). The test workers get COMPOSE_DOCKER_HOST,
 * COMPOSE_DOCKER_CONFIG and COMPOSE_BUSYBOX (a static busybox to make images from). Teardown stops the dockerd only when this setup started it (never one that was
 * already running, and never a dockerd the script did not start: it signals only its own pidfile's pid).
 */
export default async function setup(): Promise<() => Promise<void>> {
  const host = await script('provision-docker.sh');
  process.env.COMPOSE_BUSYBOX = required(host, 'BUSYBOX_STATIC', 'provision-docker.sh');
  const compose = await script('provision-compose.sh');
  const engine = await script('dockerd.sh', ['start']);
  process.env.COMPOSE_DOCKER_HOST = required(engine, 'DOCKER_HOST', 'dockerd.sh start');
  process.env.COMPOSE_DOCKER_CONFIG = required(compose, 'DOCKER_CONFIG', 'provision-compose.sh');
  console.log(`[compose] engine: ${required(engine, 'DOCKERD_STORAGE_DRIVER', 'dockerd.sh start')} storage, data root ${engine.get('DOCKERD_DATA_ROOT')}`);
  const started = engine.get('DOCKERD_STARTED') === 'yes';
  return async () => {
    if (started) await script('dockerd.sh', ['stop']);
  };
}
