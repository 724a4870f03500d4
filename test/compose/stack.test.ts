import { chownSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyedSession, postHook } from '../support/hook-client.js';
import { ROOT } from '../support/paths.js';
import { tempDir } from '../support/processes.js';
import { JAEGER, traceById, tracesOf, type JaegerTrace } from './jaeger-api.js';
import { composeImages, dockerEnv, parsePs, run, servicesUp, STACK_UP, stackFiles, timed, until } from './support.js';

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
const UID = 1000;

/** Every history line under `logDir` (all sessions' .jsonl files), joined. */
function historyText(logDir: string): string {
  return readdirSync(logDir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => readFileSync(path.join(logDir, f), 'utf8'))
    .join('\n');
}

describe('compose stack: the shipped docker-compose.yml on local stand-in images', () => {
  let home = '';
  let work = '';
  const files: string[] = [];

  const docker = async (args: string[], timeout = 15 * 60_000, env: NodeJS.ProcessEnv = {}): Promise<string> => {
    const { stdout } = await run('docker', args, { env: { ...dockerEnv(home, PROJECT), ...env }, cwd: ROOT, maxBuffer: 64 * 1024 * 1024, timeout });
    return stdout;
  };
  const compose = (args: string[], timeout?: number, env?: NodeJS.ProcessEnv) => docker(['compose', ...files.flatMap((f) => ['-f', f]), ...args], timeout, env);
  const stateDir = () => path.join(home, '.aep', 'state', 'hermes-aep');

  beforeAll(async () => {
    home = tempDir('hermes-aep-stack-home-');
    work = tempDir('hermes-aep-stack-');
    for (const dir of [path.join(home, '.aep', 'logs'), stateDir()]) {
      mkdirSync(dir, { recursive: true });
      chownSync(dir, UID, UID);
    }
    await composeImages();
    files.push(...(await stackFiles(work, docker)));
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

    const psOut = await compose(['ps', '--format', 'json']);
    expect(servicesUp(psOut)).toEqual(STACK_UP);
    const ps = parsePs(psOut);
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

  it('the live view is served on the published loopback port: the page under its strict CSP, and its state only with the token', async () => {
    const page = await fetch(`${DAEMON}/ui`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).toContain('/ui/app.js');
    expect((await fetch(`${DAEMON}/ui/app.js`)).status).toBe(200);
    // reading follows the stream's rule: the hook token of the host's state dir (no AEP_TOKEN in the stack by default)
    expect((await fetch(`${DAEMON}/ui/state`)).status).toBe(401);
    const token = readFileSync(path.join(stateDir(), 'hook-token'), 'utf8').trim();
    const state = await fetch(`${DAEMON}/ui/state`, { headers: { authorization: `Bearer ${token}` } });
    expect(state.status).toBe(200);
    expect(await state.json()).toMatchObject({ jaegerUrl: 'http://127.0.0.1:16686', canAnswer: false });
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

  // the user's story (issue 24), on the same `up`: one turn's trace in Jaeger, the refusals, the Badger volume
  const session = `compose-turn-${process.pid}`;
  let traceId = '';

  it('a scripted turn posted with the token to the published port becomes a trace in Jaeger (published query API): the run span and its tool span', async () => {
    // on_session_start, pre_llm_call, pre_tool_call, post_tool_call, on_session_end, on_session_finalize
    for (const hook of keyedSession(session, 1)) {
      const reply = await postHook(`${DAEMON}/hook`, false, hook.body, stateDir());
      expect([hook.key, reply.status]).toEqual([hook.key, 200]);
    }
    const t0 = Date.now();
    const trace = await until(
      'the turn as a trace in Jaeger',
      async () => {
        const found = await tracesOf(session);
        return found.find(
          (t) => t.spans.some((s) => s.operationName === 'execute_tool terminal') && t.spans.some((s) => s.operationName === 'invoke_agent hermes'),
        );
      },
      90_000,
    );
    console.log(`[compose] turn end to queryable in Jaeger through the stack: ${Date.now() - t0} ms`);
    const run = trace.spans.find((s) => s.operationName === 'invoke_agent hermes')!;
    const tool = trace.spans.find((s) => s.operationName === 'execute_tool terminal')!;
    // the tool span is the run span's child, in the same trace
    expect(tool.references.filter((r) => r.refType === 'CHILD_OF').map((r) => r.spanID)).toEqual([run.spanID]);
    expect(tool.tags.find((t) => t.key === 'gen_ai.tool.call.id')?.value).toBe('c0');
    traceId = trace.traceID;
  });

  it('a hook without the token is refused 401 and one with a foreign Host 403 forbidden-host; neither reaches the history', async () => {
    const refused = `compose-refused-${process.pid}`;
    const [start] = keyedSession(refused, 0);
    const noToken = await postHook(`${DAEMON}/hook`, false, start!.body, path.join(work, 'no-state-dir'));
    expect(noToken.status).toBe(401);
    const foreignHost = await postHook(`${DAEMON}/hook`, false, start!.body, stateDir(), { host: 'attacker.example:8393' });
    expect(foreignHost.status).toBe(403);
    expect((JSON.parse(foreignHost.body) as { error: string }).error).toBe('forbidden-host');

    // a hook accepted after both reaches the history; the refused session's never does
    const marker = `compose-after-refusals-${process.pid}`;
    const [after] = keyedSession(marker, 0);
    expect((await postHook(`${DAEMON}/hook`, false, after!.body, stateDir())).status).toBe(200);
    const logDir = path.join(home, '.aep', 'logs');
    const text = await until('the accepted hook in the history', async () => {
      const all = historyText(logDir);
      return all.includes(marker) ? all : undefined;
    });
    expect(text).not.toContain(refused);
  });

  it("a daemon uid that does not own the host's ~/.aep: the container log and /healthz say so (503 start-refused), a hook is refused 503, not dropped; the right uid is healthy again", async () => {
    const wrong = 1234;
    const why = `owned by uid ${UID}, not by this user (uid ${wrong})`;
    // as a user whose uid is not 1000 would run it without HERMES_AEP_UID=$(id -u): here the reverse, same mismatch
    await timed('up -d hermes-aep as the wrong uid', () =>
      compose(['up', '-d', 'hermes-aep'], undefined, { HERMES_AEP_UID: String(wrong), HERMES_AEP_GID: String(wrong) }),
    );
    const body = await until('/healthz answering start-refused', async () => {
      const res = await fetch(`${DAEMON}/healthz`);
      return res.status === 503 ? ((await res.json()) as { error: string; problems: Array<{ variable: string; rule: string }> }) : undefined;
    });
    expect(body.error).toBe('start-refused');
    expect(body.problems.find((p) => p.variable === 'AEP_STATE_DIR')?.rule).toContain(why);
    expect(await compose(['logs', '--no-color', 'hermes-aep'])).toContain(why);

    const [hook] = keyedSession(`compose-wrong-uid-${process.pid}`, 0);
    const reply = await postHook(`${DAEMON}/hook`, false, hook!.body, stateDir());
    expect([reply.status, (JSON.parse(reply.body) as { error: string }).error]).toEqual([503, 'start-refused']);

    await timed('up -d --wait hermes-aep as uid 1000 again', () => compose(['up', '-d', '--wait', 'hermes-aep']));
    expect((await fetch(`${DAEMON}/healthz`)).status).toBe(200);
  });

  it('docker compose restart, then down (volumes kept) and up -d --wait: Jaeger still serves the trace from its Badger volume', async () => {
    expect(traceId).not.toBe('');
    const before = await traceById(traceId);
    expect(typeof before).toBe('object');
    const spanIds = (before as JaegerTrace).spans.map((s) => s.spanID).sort();

    await timed('docker compose restart', () => compose(['restart']));
    const afterRestart = await until('Jaeger answering after restart', async () => {
      const t = await traceById(traceId).catch(() => undefined);
      return typeof t === 'object' ? t : undefined;
    });
    expect(afterRestart.spans.map((s) => s.spanID).sort()).toEqual(spanIds);

    await timed('docker compose down (no -v)', () => compose(['down']));
    await timed('docker compose up -d --wait', () => compose(['up', '-d', '--wait']));
    const afterUp = await until('Jaeger answering after down and up', async () => {
      const t = await traceById(traceId).catch(() => undefined);
      return typeof t === 'object' ? t : undefined;
    });
    expect(afterUp.spans.map((s) => s.spanID).sort()).toEqual(spanIds);
  });

  it('down -v removes the containers, the network and the named volumes', async () => {
    await timed('docker compose down -v', () => compose(['down', '-v']));
    const label = `label=com.docker.compose.project=${PROJECT}`;
    expect((await docker(['ps', '-aq', '--filter', label])).trim()).toBe('');
    expect((await docker(['volume', 'ls', '-q', '--filter', label])).trim()).toBe('');
  });

  it('up -d --wait after down -v: Jaeger starts on a new Badger volume and no longer serves the trace', async () => {
    expect(traceId).not.toBe('');
    await timed('docker compose up -d --wait (after down -v)', () => compose(['up', '-d', '--wait']));
    // a new turn reaches the new Jaeger first, so the pipeline is flowing and the old trace's 404 is Jaeger's answer
    const next = `compose-turn-after-wipe-${process.pid}`;
    for (const hook of keyedSession(next, 1)) expect((await postHook(`${DAEMON}/hook`, false, hook.body, stateDir())).status).toBe(200);
    await until('the new turn in the new Jaeger', async () => ((await tracesOf(next)).length > 0 ? true : undefined), 90_000);
    expect(await traceById(traceId)).toBe(404);
    expect(await tracesOf(session)).toEqual([]);
  });
});
