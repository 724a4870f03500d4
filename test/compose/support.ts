import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { stringify as stringifyYaml } from 'yaml';
import { ROOT } from '../support/paths.js';

/** What the compose tier's stack tests share: the engine's environment, `npm run compose:images`, the build's extra CA. */

export const run = promisify(execFile);

/** The compose CLI's environment: our engine (global-setup), the classic builder, `home` as HOME, one project name. */
export function dockerEnv(home: string, project: string): NodeJS.ProcessEnv {
  const host = process.env.COMPOSE_DOCKER_HOST;
  const config = process.env.COMPOSE_DOCKER_CONFIG;
  if (!host || !config) throw new Error('COMPOSE_DOCKER_HOST / COMPOSE_DOCKER_CONFIG unset: run through `npm run test:compose`');
  // the classic builder never pulls a frontend image; HOME: the compose files mount paths under ${HOME}
  return { ...process.env, HOME: home, DOCKER_HOST: host, DOCKER_CONFIG: config, DOCKER_BUILDKIT: '0', COMPOSE_PROJECT_NAME: project };
}

export async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  const out = await work();
  console.log(`[compose] ${label}: ${Date.now() - t0} ms`);
  return out;
}

/** `docker compose ps --format json` prints one object per line (newer) or one array (older releases). */
export function parsePs(stdout: string): Array<Record<string, unknown>> {
  const text = stdout.trim();
  if (!text) return [];
  if (text.startsWith('[')) return JSON.parse(text) as Array<Record<string, unknown>>;
  return text.split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Poll `probe` until it yields a value, or fail with `what` at the deadline. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, deadlineMs = 60_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** `npm run compose:images` into our engine, with the real HOME: the provisioning caches (stand-ins, Go, Node) live under it. */
export async function composeImages(): Promise<void> {
  const env = { ...process.env, DOCKER_HOST: process.env.COMPOSE_DOCKER_HOST };
  await timed('npm run compose:images', () =>
    run('bash', [path.join(ROOT, 'scripts', 'compose-images.sh')], { env, maxBuffer: 16 * 1024 * 1024, timeout: 30 * 60_000 }),
  );
}

const CA_IMAGE = 'hermes-aep-test/node-extra-ca:local';

/**
 * Where the host's TLS egress is re-signed by a local CA (NODE_EXTRA_CA_CERTS), `npm ci` in the image build
 * needs it: a one-layer image FROM the Dockerfile's NODE_IMAGE (the node stand-in) that adds the CA, passed to
 * `services` through the Dockerfile's own NODE_IMAGE build argument in an override written to `work`. Returns
 * that override's path, or undefined when the host has no extra CA (the shipped Dockerfile then builds as is).
 */
export async function extraCaOverride(work: string, services: string[], docker: (args: string[]) => Promise<string>): Promise<string | undefined> {
  const extraCa = process.env.NODE_EXTRA_CA_CERTS;
  if (!extraCa || !existsSync(extraCa)) return undefined;
  const ctx = path.join(work, 'node-extra-ca');
  mkdirSync(ctx, { recursive: true });
  copyFileSync(extraCa, path.join(ctx, 'extra-ca.pem'));
  const nodeImage = /^ARG NODE_IMAGE=(\S+)$/m.exec(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'))?.[1];
  if (!nodeImage) throw new Error('Dockerfile has no ARG NODE_IMAGE=');
  const pem = '/usr/local/share/hermes-aep-test/extra-ca.pem';
  writeFileSync(path.join(ctx, 'Dockerfile'), `FROM ${nodeImage}\nCOPY extra-ca.pem ${pem}\nENV NODE_EXTRA_CA_CERTS=${pem}\n`);
  await docker(['build', '--quiet', '--network', 'none', '-t', CA_IMAGE, ctx]);
  const file = path.join(work, 'compose.extra-ca.yml');
  const build = { build: { args: { NODE_IMAGE: CA_IMAGE } } };
  writeFileSync(file, stringifyYaml({ services: Object.fromEntries(services.map((s) => [s, build])) }));
  return file;
}

/** The stack's compose files as the tier runs them: the shipped file, the offline override, the extra-CA override when the host needs one. */
export async function stackFiles(work: string, docker: (args: string[]) => Promise<string>): Promise<string[]> {
  const files = [path.join(ROOT, 'docker-compose.yml'), path.join(ROOT, 'test', 'compose', 'compose.offline.yml')];
  const ca = await extraCaOverride(work, ['hermes-aep'], docker);
  return ca ? [...files, ca] : files;
}

/** `docker compose ps` of the whole stack, every service healthy but Grafana (left out) and the collector (no healthcheck). */
export const STACK_UP = [
  ['hermes-aep', 'running', 'healthy'],
  ['jaeger', 'running', 'healthy'],
  ['otel-collector', 'running', 'no healthcheck'],
  ['prometheus', 'running', 'healthy'],
];

/** Service, state and health of each container `docker compose ps --format json` printed, sorted. */
export const servicesUp = (stdout: string) =>
  parsePs(stdout)
    .map((c) => [c.Service, c.State, c.Health || 'no healthcheck'])
    .sort();
