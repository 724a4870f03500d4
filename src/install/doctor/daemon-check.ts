import { readFileSync } from 'node:fs';
import path from 'node:path';
import { defaultStateDir } from '../shim-target.js';
import { fail, ok, warn, type Check } from './check.js';
import { endpointName, probeHealth, type Endpoint, type Probe } from './daemon-probe.js';

/** Where the daemon is looked for, as the shim resolves it from the environment (AEP_STATE_DIR, AEP_SOCKET, AEP_HOST/AEP_PORT). */
export interface DaemonPlaces {
  readonly stateDir: string;
  /** undefined: AEP_SOCKET=off */
  readonly socket: string | undefined;
  /** set when AEP_PORT is */
  readonly url: string | undefined;
}

export function daemonPlaces(env: NodeJS.ProcessEnv): DaemonPlaces {
  const stateDir = path.resolve(env.AEP_STATE_DIR || defaultStateDir());
  const socket = env.AEP_SOCKET === 'off' ? undefined : path.resolve(env.AEP_SOCKET || path.join(stateDir, 'hook.sock'));
  const host = env.AEP_HOST && env.AEP_HOST !== '0.0.0.0' && env.AEP_HOST !== '::' ? env.AEP_HOST : '127.0.0.1';
  const url = env.AEP_PORT ? `http://${host.includes(':') ? `[${host}]` : host}:${env.AEP_PORT}` : undefined;
  return { stateDir, socket, url };
}

const START = 'start it: hermes-aep daemon (or npm start in the checkout), with the same AEP_STATE_DIR / AEP_SOCKET / AEP_PORT as here';

const problemsOf = (body: Record<string, unknown> | undefined): string[] =>
  Array.isArray(body?.problems)
    ? body.problems.map((p) => {
        const q = p as { variable?: unknown; rule?: unknown };
        return `${String(q.variable)}: ${String(q.rule)}`;
      })
    : [];

/** What one /healthz probe says, as a check. */
export function daemonFinding(where: string, p: Probe): Check {
  const what = `daemon (${where})`;
  if (!p.answered) {
    const why =
      p.code === 'ENOENT'
        ? 'no socket file: no daemon is running there'
        : p.code === 'ECONNREFUSED'
          ? 'connection refused: no daemon is running there'
          : `no answer (${p.code})`;
    return fail(what, why, START);
  }
  const body = p.body;
  if (p.status === 503 && body?.error === 'start-refused') {
    const problems = problemsOf(body);
    return fail(
      what,
      `refused to start: ${problems.length ? problems.join('; ') : 'no problems listed'}`,
      'correct the settings named, then restart hermes-aep daemon',
    );
  }
  const version = typeof body?.version === 'string' ? `version ${body.version}` : 'version unknown';
  const uptime = typeof body?.uptime_s === 'number' ? `, up ${body.uptime_s} s` : '';
  if (p.status === 200) return ok(what, `answers /healthz: ${version}${uptime}`);
  if (p.status === 503 && body?.status === 'degraded') {
    const degraded = Array.isArray(body.degraded) ? body.degraded.map(String).join('; ') : '';
    return warn(
      what,
      `degraded (${version}${uptime}): ${degraded || 'no reason given'}`,
      'see the daemon log for the sink named; /healthz says when it recovers',
    );
  }
  if (p.status === 401)
    return fail(what, 'refused the token (401)', 'the daemon and this shell use different state directories: set AEP_STATE_DIR as the daemon has it');
  return fail(what, `answered /healthz with HTTP ${p.status}`, 'is something else listening there? check AEP_SOCKET / AEP_PORT against the daemon');
}

export interface DaemonResult {
  readonly checks: Check[];
  /** the endpoints that answered 200 or degraded (the registered command is compared with these) */
  readonly answering: Endpoint[];
}

function readToken(stateDir: string): string | undefined {
  try {
    return /^[0-9a-f]{64}$/.exec(readFileSync(path.join(stateDir, 'hook-token'), 'utf8').trim())?.[0];
  } catch {
    return undefined;
  }
}

export async function checkDaemon(places: DaemonPlaces): Promise<DaemonResult> {
  const endpoints: Endpoint[] = [];
  if (places.socket) endpoints.push({ socket: places.socket });
  if (places.url) endpoints.push({ url: places.url, token: readToken(places.stateDir) });
  if (endpoints.length === 0)
    return { checks: [fail('daemon', 'AEP_SOCKET=off and no AEP_PORT: nowhere to look', 'set AEP_PORT (TCP) or unset AEP_SOCKET')], answering: [] };
  const checks: Check[] = [];
  const answering: Endpoint[] = [];
  for (const e of endpoints) {
    const p = await probeHealth(e);
    const c = daemonFinding(endpointName(e), p);
    checks.push(c);
    if (p.answered && (p.status === 200 || p.body?.status === 'degraded')) answering.push(e);
  }
  return { checks, answering };
}
