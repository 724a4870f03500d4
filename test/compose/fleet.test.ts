import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceIdFor } from '../../src/otel/ids.js';
import { JaegerQuery, type FoundTrace } from '../e2e/support/services.js';
import { binomialBounds, counter, session, type Session } from '../support/fleet-turns.js';
import { postHook } from '../support/hook-client.js';
import { ROOT } from '../support/paths.js';
import { tempDir } from '../support/processes.js';
import { composeImages, dockerEnv, extraCaOverride, parsePs, run, timed, until } from './support.js';

/**
 * The shipped deploy/fleet/docker-compose.yml on the `npm run compose:images` stand-ins, with
 * test/compose/fleet.offline.yml as the only override: three host daemons, the hub, three agent collectors,
 * the load balancer, two gateways and Jaeger come up healthy. Then sessions from every host go through them,
 * as the shim posts hooks (each host's own hook token, its published port): the hub holds every event of every
 * host once; each trace is decided by one gateway and kept whole or dropped whole; every error, denial and
 * human-wait trace is kept; the plain ones at the file's FLEET_SAMPLE_PERCENT (10) within a binomial bound.
 */

const PROJECT = `haep-fleet-${process.pid}`;
const DAEMONS = ['aep-hub', 'host-1', 'host-2', 'host-3'];
const COLLECTORS = ['agent-1', 'agent-2', 'agent-3', 'gateway-1', 'gateway-2', 'loadbalancer'];
// the published loopback ports of the daemons (the compose file's ports:)
const PUBLISHED: Record<string, number> = { 'aep-hub': 8390, 'host-1': 8391, 'host-2': 8392, 'host-3': 8393 };
const HOSTS = ['host-1', 'host-2', 'host-3'];
const GATEWAYS = ['gateway-1', 'gateway-2'];
// the compose file's FLEET_SAMPLE_PERCENT (both gateways)
const SAMPLE_PERCENT = 10;
// 18 kept-by-policy and 42 plain sessions per host: 126 plain draws, enough for a 0 % or 100 % policy to fall outside
const SESSIONS_PER_HOST = 60;
const RUN_TAG = randomBytes(3).toString('hex');
/** where the image keeps the history (the Dockerfile's AEP_LOG_DIR) */
const LOG_DIR = '/var/lib/hermes-aep/log';

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

  const sessions: Session[] = [];
  /** every history line under `dir` in a daemon's container */
  const linesIn = async (service: string, dir: string): Promise<string[]> =>
    (await compose(['exec', '-T', service, 'find', dir, '-name', '*.jsonl', '-exec', 'cat', '{}', '+'])).split('\n').filter(Boolean);
  /** a gateway's own metrics (port 8888, not published), read from inside the network */
  const gatewayMetrics = (g: string) => compose(['exec', '-T', 'jaeger', 'wget', '-q', '-O', '-', `http://${g}:8888/metrics`]);

  it('sessions from every host, posted with its hook token to its published port: every host relayed to the hub, which holds every event of every host once', async () => {
    const stateDirs = new Map<string, string>();
    for (const host of HOSTS) {
      // the shim's hook token, as a user on that host has it in its state dir
      const token = (await compose(['exec', '-T', host, 'cat', '/var/lib/hermes-aep/state/hook-token'])).trim();
      const dir = path.join(work, host);
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'hook-token'), `${token}\n`, { mode: 0o600 });
      stateDirs.set(host, dir);
      await until(`${host} linked to the hub`, async () => {
        const health = (await (await fetch(`http://127.0.0.1:${PUBLISHED[host]}/healthz`)).json()) as { relay?: { connected?: boolean } };
        return health.relay?.connected === true ? true : undefined;
      });
    }
    const t0 = Date.now();
    await Promise.all(
      HOSTS.map(async (host, h) => {
        for (let i = 0; i < SESSIONS_PER_HOST; i++) {
          const s = session(RUN_TAG, h, i);
          sessions.push(s);
          for (const body of s.bodies) {
            const r = await postHook(`http://127.0.0.1:${PUBLISHED[host]}/hook`, false, body, stateDirs.get(host)!);
            if (r.status !== 200) throw new Error(`${host} POST /hook: HTTP ${r.status} ${r.body}`);
          }
        }
      }),
    );
    console.log(`[compose] fleet: ${sessions.reduce((n, s) => n + s.bodies.length, 0)} hooks over 3 hosts: ${Date.now() - t0} ms`);

    const own = new Map<string, string[]>();
    for (const host of HOSTS) own.set(host, await linesIn(host, `${LOG_DIR}/hermes`));
    for (const host of HOSTS) {
      // every session of this host is in its own history
      const text = own.get(host)!.join('\n');
      const mine = sessions.filter((s) => s.host === HOSTS.indexOf(host));
      expect(mine.filter((s) => !text.includes(s.sid)).map((s) => s.sid)).toEqual([]);
    }
    const total = [...own.values()].reduce((n, l) => n + l.length, 0);
    const atHub = await until('the hub holding every host event', async () => {
      const lines = await linesIn('aep-hub', `${LOG_DIR}/ingest`);
      return lines.length >= total ? lines : undefined;
    });
    expect(atHub.length).toBe(total);
    expect(new Set(atHub)).toEqual(new Set([...own.values()].flat()));
    for (const host of HOSTS)
      expect(
        atHub.some((l) => l.includes(`"source":"aep://${host}/`)),
        host,
      ).toBe(true);
  });

  it(`each trace decided by one gateway and kept whole or dropped whole; every error, denial and human wait kept; plain traces at ${SAMPLE_PERCENT} % within a 1e-4 binomial bound`, async () => {
    expect(sessions.length).toBe(HOSTS.length * SESSIONS_PER_HOST);
    // the spans each turn should have, from the hosts' own histories: the run, each tool call, each card
    const expected = new Map<string, number>();
    for (const host of HOSTS) {
      for (const line of await linesIn(host, `${LOG_DIR}/hermes`)) {
        const e = JSON.parse(line) as { type: string; session: string; run?: string };
        if (!e.run || !['run.started', 'tool.requested', 'attention.requested'].includes(e.type)) continue;
        const id = traceIdFor(e.session, e.run);
        expected.set(id, (expected.get(id) ?? 0) + 1);
      }
    }
    const t0 = Date.now();
    // every trace decided (the decision wait is the file's 10 s), and what the gateways kept all sent on
    const sum = async (name: string, want?: Record<string, string>) => {
      let n = 0;
      for (const g of GATEWAYS) n += counter(await gatewayMetrics(g), name, want);
      return n;
    };
    await until(
      'the gateways deciding every trace',
      async () => ((await sum('otelcol_processor_tail_sampling_global_count_traces_sampled')) >= sessions.length ? true : undefined),
      120_000,
    );
    const sent = await until('the gateways sending what they kept', async () => {
      const released = await sum('otelcol_processor_incoming_items', { processor: 'resource' });
      const out = await sum('otelcol_exporter_sent_spans');
      return released > 0 && out === released ? out : undefined;
    });
    const jaeger = new JaegerQuery('http://127.0.0.1:16686');
    const ours = new Set(sessions.map((s) => s.traceId));
    const kept = await until('Jaeger holding every span the gateways sent', async () => {
      const traces = (await jaeger.findTraces('hermes-aep', t0 - 15 * 60_000, 1000)).filter((t) => ours.has(t.traceId));
      return traces.reduce((n, t) => n + t.spans.length, 0) >= sent ? new Map(traces.map((t) => [t.traceId, t] as [string, FoundTrace])) : undefined;
    });
    console.log(`[compose] fleet: last hook to every kept span in Jaeger: ${Date.now() - t0} ms (decision wait 10 s)`);
    expect([...kept.values()].reduce((n, t) => n + t.spans.length, 0)).toBe(sent);

    for (const [id, t] of kept) {
      expect(t.spans.length, `spans of trace ${id}`).toBe(expected.get(id));
      const via = new Set(t.spans.map((x) => x.resource['fleet.gateway']));
      expect([...via], `gateways of trace ${id}`).toHaveLength(1);
      expect(GATEWAYS).toContain([...via][0]);
    }
    const missing = sessions.filter((s) => s.kind !== 'plain' && !kept.has(s.traceId)).map((s) => `${s.kind} ${s.sid}`);
    expect(missing).toEqual([]);
    const plain = sessions.filter((s) => s.kind === 'plain');
    const keptPlain = plain.filter((s) => kept.has(s.traceId)).length;
    const [lo, hi] = binomialBounds(plain.length, SAMPLE_PERCENT / 100, 1e-4);
    console.log(`[compose] fleet: plain traces kept ${keptPlain} of ${plain.length} (bounds [${lo}, ${hi}]); kept in all ${kept.size} of ${sessions.length}`);
    expect(keptPlain).toBeGreaterThanOrEqual(lo);
    expect(keptPlain).toBeLessThanOrEqual(hi);
    // the bound excludes both a policy that keeps nothing plain and one that keeps half or more
    expect(lo).toBeGreaterThan(0);
    expect(hi).toBeLessThan(plain.length / 2);
  });

  it('down -v removes the containers and the named volumes', async () => {
    await timed('fleet docker compose down -v', () => compose(['down', '-v']));
    const label = `label=com.docker.compose.project=${PROJECT}`;
    expect((await docker(['ps', '-aq', '--filter', label])).trim()).toBe('');
    expect((await docker(['volume', 'ls', '-q', '--filter', label])).trim()).toBe('');
  });
});
