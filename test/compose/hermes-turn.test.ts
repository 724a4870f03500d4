import { execFile, spawn } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, text, toolCall, type FakeLlm } from '../e2e/support/fake-llm.js';
import { HermesTty, makeHermesHome, type HermesHome } from '../e2e/support/hermes.js';
import { E2E_HERMES_VERSIONS, hermesBinEnv } from '../e2e/support/hermes-versions.js';
import { aepValidator } from '../support/aep-validator.js';
import { dashboardExprs, loadDashboard, substitute } from '../support/dashboard.js';
import { eventKey, keyedSession } from '../support/hook-client.js';
import { CLI, ROOT } from '../support/paths.js';
import { tempDir } from '../support/processes.js';
import { readLogs, streamViolations, type Ev } from '../support/stream-invariants.js';
import { parentsOf, tagOf, tracesOf, type JaegerTrace } from './jaeger-api.js';
import { composeImages, dockerEnv, parsePs, run, servicesUp, STACK_UP, stackFiles, timed, until } from './support.js';

/**
 * The user's story end to end through the running stack (issue 24): the README's compose steps on the host
 * (`install --url http://127.0.0.1:8393/hook` as the user, `mkdir -p ~/.aep/logs`, then the shipped
 * docker-compose.yml with test/compose/compose.offline.yml), then the real Hermes (each release in
 * E2E_HERMES_VERSIONS) in a terminal under tmux, driven by the scripted model on host loopback: one turn with
 * a plain tool call, a dangerous command whose approval card is answered "Allow once", and a clarify answered
 * with a choice. The hooks go host shim → published 127.0.0.1:8393 → the daemon in the container. Then the
 * turn is looked up where a user looks: Jaeger's published API, Prometheus through the dashboard's own
 * queries, the collector's log (the logs pipeline ends in `debug`), the history on the host. Last, the daemon
 * container is SIGKILLed between two hooks of a session: the shim answers `{}` and spools, and the next
 * start ingests each spooled hook once.
 *
 * The user is uid 1000 (the compose default): HOME belongs to it, and install, `mkdir` and the shim of the
 * kill test run as it, from a copy of this Node binary it can read. Hermes itself runs as root (its venv is
 * under root's cache): it reads the token and runs the installed shim as any process of the user would.
 */

const PROJECT = `haep-turn-${process.pid}`;
const DAEMON = 'http://127.0.0.1:8393';
const PROMETHEUS = 'http://127.0.0.1:9090';
const HOOK_URL = `${DAEMON}/hook`;
const UID = 1000;
const execFileP = promisify(execFile);

/** the tool call ids of one release's turn */
const ids = (version: string) => {
  const v = version.replace(/\W/g, '_');
  return { echo: `call_story_echo_${v}`, rm: `call_story_rm_${v}`, clarify: `call_story_clar_${v}` };
};

interface PromVector {
  status: string;
  error?: string;
  data?: { result: { metric: Record<string, string>; value: [number, string] }[] };
}
async function promQuery(query: string, time?: number): Promise<PromVector> {
  const params = new URLSearchParams({ query });
  if (time !== undefined) params.set('time', String(time));
  const res = await fetch(`${PROMETHEUS}/api/v1/query`, { method: 'POST', body: params, signal: AbortSignal.timeout(10_000) });
  return (await res.json()) as PromVector;
}

describe('compose: the real Hermes through the shipped stack, from install to Jaeger, Prometheus, the collector log and a killed daemon', () => {
  let home = '';
  let work = '';
  let nodeDir = '';
  let llm: FakeLlm;
  const files: string[] = [];
  const hermes = new Map<string, HermesHome>();
  let token = '';

  const docker = async (args: string[], timeout = 15 * 60_000): Promise<string> => {
    const { stdout } = await run('docker', args, { env: dockerEnv(home, PROJECT), cwd: ROOT, maxBuffer: 64 * 1024 * 1024, timeout });
    return stdout;
  };
  const compose = (args: string[], timeout?: number) => docker(['compose', ...files.flatMap((f) => ['-f', f]), ...args], timeout);
  const stateDir = () => path.join(home, '.aep', 'state', 'hermes-aep');
  const logDir = () => path.join(home, '.aep', 'logs');
  const events = (): Ev[] => [...readLogs(logDir()).values()].flat();
  const lane = (session: string) => events().filter((e) => e.session === session);
  const userNode = () => path.join(nodeDir, 'node');
  /** a command as the user (uid 1000), HOME theirs */
  const asUser = (file: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
    execFileP(file, args, { uid: UID, gid: UID, cwd: home, env: { PATH: process.env.PATH, HOME: home, ...env }, timeout: 60_000 });

  beforeAll(async () => {
    // the Hermes releases, as the e2e tier provisions them (a warm cache answers at once)
    for (const version of E2E_HERMES_VERSIONS) {
      const { stdout } = await timed(`provision-hermes.sh ${version}`, () =>
        run('bash', [path.join(ROOT, 'scripts', 'provision-hermes.sh')], { env: { ...process.env, HERMES_VERSION: version }, timeout: 45 * 60_000 }),
      );
      const bin = /^HERMES=(.+)$/m.exec(stdout)?.[1];
      if (!bin) throw new Error(`provision-hermes.sh ${version} printed no HERMES= line`);
      process.env[hermesBinEnv(version)] = bin;
    }
    home = tempDir('hermes-aep-turn-home-');
    chownSync(home, UID, UID);
    work = tempDir('hermes-aep-turn-');
    // the user's node: this Node binary, copied where uid 1000 can run it (root's cache is 0700)
    nodeDir = tempDir('hermes-aep-turn-node-');
    copyFileSync(process.execPath, userNode());
    chmodSync(nodeDir, 0o755);
    chmodSync(userNode(), 0o755);

    llm = await startFakeLlm({
      steps: E2E_HERMES_VERSIONS.map((version) => ({
        marker: `MARK-STORY-${version}`,
        replies: [
          toolCall('terminal', { command: 'echo story' }, ids(version).echo),
          toolCall('terminal', { command: `rm -rf ${path.join(work, 'danger-x')}` }, ids(version).rm),
          toolCall('clarify', { question: 'Which colour?', choices: ['red', 'green', 'blue'] }, ids(version).clarify),
          text('Story done.'),
        ],
      })),
      // Hermes 0.19.0's smart-approval reviewer (a tool-less request): escalate to the person at the terminal
      auxiliaryReply: (v) =>
        v.messages.some((m) => typeof m.content === 'string' && m.content.includes('security reviewer')) ? 'ESCALATE' : 'Fake session title',
    });

    await composeImages();
    files.push(...(await stackFiles(work, docker)));
    await compose(['down', '-v', '--remove-orphans']).catch(() => undefined);
  });

  afterAll(async () => {
    if (home) await compose(['down', '-v', '--remove-orphans']).catch(() => undefined);
    await llm?.close();
    for (const h of hermes.values()) rmSync(path.dirname(h.home), { recursive: true, force: true });
    for (const dir of [home, work, nodeDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the README's order, on the host as the user: install --url writes the hooks and the hook token (0600, the user's), then mkdir -p ~/.aep/logs", async () => {
    for (const version of E2E_HERMES_VERSIONS) {
      // HOME is the compose HOME for Hermes too: the installed shim finds the token under it
      const h = await makeHermesHome({ modelUrl: llm.url, hookEnv: { HOME: home }, version, install: false });
      hermes.set(version, h);
      const root = path.dirname(h.home);
      for (const p of [root, h.home, h.cwd, ...readdirSync(h.home, { recursive: true, encoding: 'utf8' }).map((f) => path.join(h.home, f))])
        chownSync(p, UID, UID);
      const out = await asUser(userNode(), [CLI, 'install', '--url', HOOK_URL], { HERMES_HOME: h.home });
      expect(out.stdout).toContain(`target: ${HOOK_URL}`);
      const config = readFileSync(path.join(h.home, 'config.yaml'), 'utf8');
      expect(config).toContain(`--url ${HOOK_URL}`);
    }
    await asUser('mkdir', ['-p', logDir()]);
    const tokenFile = path.join(stateDir(), 'hook-token');
    const st = statSync(tokenFile);
    expect([st.uid, st.mode & 0o777]).toEqual([UID, 0o600]);
    token = readFileSync(tokenFile, 'utf8').trim();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(logDir()).uid).toBe(UID);
  });

  it('docker compose up -d --build --wait: all healthy; the daemon keeps the token install wrote', async () => {
    await timed('up -d --build --wait to all healthy', () => compose(['up', '-d', '--build', '--wait']));
    expect(servicesUp(await compose(['ps', '--format', 'json']))).toEqual(STACK_UP);
    expect(readFileSync(path.join(stateDir(), 'hook-token'), 'utf8').trim()).toBe(token);
  });

  const sessions = new Map<string, string>();

  describe.each(E2E_HERMES_VERSIONS)('real Hermes %s in a terminal, hooks to the published port', (version) => {
    const call = ids(version);
    let exitedAt = 0;
    const sessionOf = () => sessions.get(version)!;

    beforeAll(async () => {
      const tty = new HermesTty(hermes.get(version)!);
      const t0 = Date.now();
      try {
        tty.start();
        await tty.waitScreen('❯', 90_000);
        tty.line(`MARK-STORY-${version} go`);
        await tty.waitScreen('Allow once', 90_000);
        tty.keys('Enter');
        await tty.waitScreen('Hermes needs your input', 60_000);
        tty.keys('Down');
        await tty.waitScreen('❯ 2. green', 10_000);
        tty.keys('Enter');
        await tty.waitScreen('Story done.', 60_000);
        await tty.waitScreen(/^❯\s*$/m, 30_000);
        tty.line('/exit');
        await until('the CLI to exit', async () => (!tty.alive() ? true : undefined), 60_000);
        exitedAt = Date.now();
      } finally {
        tty.stop();
      }
      console.log(`[compose] Hermes ${version}: terminal session (start, turn, approval, clarify, /exit): ${exitedAt - t0} ms`);
      const requested = await until('the turn in the host history', async () =>
        events().find((e) => e.type === 'tool.requested' && e.data.tool?.call_id === call.echo),
      );
      sessions.set(version, requested.session);
    });

    it('the turn reached the daemon through the published port: three tool calls, the approval card answered once, the clarify answered', async () => {
      const mine = await until(
        'the session ended in the history',
        async () => {
          const l = lane(sessionOf());
          return l.some((e) => e.type === 'session.ended') ? l : undefined;
        },
        30_000,
      );
      const pair = (id: string) => mine.filter((e) => e.data?.tool?.call_id === id).map((e) => e.type);
      expect(pair(call.echo)).toEqual(['tool.requested', 'tool.completed']);
      expect(pair(call.rm)).toEqual(['tool.requested', 'tool.completed']);
      expect(pair(call.clarify)).toEqual(['tool.requested', 'tool.completed']);
      const cards = mine.filter((e) => e.type === 'attention.requested');
      expect(cards.map((c) => c.data.kind).sort()).toEqual(['form', 'permission']);
      const permission = cards.find((c) => c.data.kind === 'permission')!;
      expect(mine.find((e) => e.id === permission.cause)?.data.tool.call_id).toBe(call.rm);
      const answered = mine.filter((e) => e.type === 'attention.answered');
      expect(answered.find((e) => e.subject === permission.id)?.data.answer.option).toBe('once');
      const form = cards.find((c) => c.data.kind === 'form')!;
      expect(mine.filter((e) => e.subject === form.id).map((e) => e.type)).toContain('attention.answered');
      expect(mine.filter((e) => e.type === 'run.finished')).toHaveLength(1);
    });

    it("the turn is queryable in Jaeger's published API: the run span, its tool spans as children, the approval card's span under its tool", async () => {
      const trace: JaegerTrace = await until(
        'the turn as one trace in Jaeger',
        async () => {
          const found = await tracesOf(sessionOf());
          return found.find(
            (t) =>
              t.spans.some((s) => s.operationName === 'invoke_agent hermes') &&
              t.spans.filter((s) => s.operationName.startsWith('execute_tool')).length === 3 &&
              t.spans.some((s) => s.operationName === 'attention permission'),
          );
        },
        90_000,
      );
      console.log(`[compose] Hermes ${version}: last hook answered (CLI exited) → trace queryable in Jaeger: ${Date.now() - exitedAt} ms`);
      const runSpan = trace.spans.find((s) => s.operationName === 'invoke_agent hermes')!;
      const tools = trace.spans.filter((s) => s.operationName.startsWith('execute_tool'));
      expect(tools.map((s) => [s.operationName, tagOf(s, 'gen_ai.tool.call.id')]).sort()).toEqual(
        [
          ['execute_tool clarify', call.clarify],
          ['execute_tool terminal', call.echo],
          ['execute_tool terminal', call.rm],
        ].sort(),
      );
      for (const t of tools) expect(parentsOf(t)).toEqual([runSpan.spanID]);
      const rmSpan = tools.find((s) => tagOf(s, 'gen_ai.tool.call.id') === call.rm)!;
      const card = trace.spans.find((s) => s.operationName === 'attention permission')!;
      expect(parentsOf(card)).toEqual([rmSpan.spanID]);
      console.log(
        `[compose] Hermes ${version}: spans in the trace: ${trace.spans
          .map((s) => s.operationName)
          .sort()
          .join(', ')}`,
      );
    });

    it("the history on the host: the session's file owned by uid 1000, every event valid AEP, the lane sound", () => {
      const file = path.join(logDir(), 'hermes', `${sessionOf()}.jsonl`);
      expect(statSync(file).uid).toBe(UID);
      const validate = aepValidator();
      const mine = lane(sessionOf());
      expect(mine.length).toBeGreaterThan(10);
      for (const e of mine) expect(validate(e), e.type).toEqual([]);
      expect(streamViolations(mine, { requireCauses: true })).toEqual([]);
    });
  });

  it("Prometheus, through the dashboard's own queries: the turns, the tool calls by tool, the approval", async () => {
    const dashboard = dashboardExprs(loadDashboard());
    const exprOf = (title: string) => dashboard.find((d) => d.panel.title === title)!.target.expr;
    const all = events().filter((e) => [...sessions.values()].includes(e.session));
    const finished = all.filter((e) => e.type === 'run.finished').length;
    const byTool = new Map<string, number>();
    for (const e of all.filter((e) => e.type === 'tool.requested')) byTool.set(e.data.tool.name, (byTool.get(e.data.tool.name) ?? 0) + 1);
    expect(finished).toBe(E2E_HERMES_VERSIONS.length);
    expect(Object.fromEntries(byTool)).toEqual({ terminal: 2 * E2E_HERMES_VERSIONS.length, clarify: E2E_HERMES_VERSIONS.length });

    const t0 = Date.now();
    // evaluated at the newest scrape's own time: increase() and rate() then extrapolate nothing past it
    const at = async () => Number((await promQuery('max(timestamp(aep_runs_total{job="hermes-aep"}))')).data?.result[0]?.value[1]);
    const turns = substitute(exprOf('Turns in range'), { range: '1h' });
    const tools = substitute(exprOf('Tool calls by tool (per minute)'), { rateInterval: '1h' });
    const approvals = substitute(exprOf('Approvals by choice'), { range: '1h' });
    const got = await until(
      'the turns and tool calls in Prometheus',
      async () => {
        const time = await at();
        if (!Number.isFinite(time)) return undefined;
        const turnRows = (await promQuery(turns, time)).data?.result ?? [];
        const toolRows = (await promQuery(tools, time)).data?.result ?? [];
        const approvalRows = (await promQuery(approvals, time)).data?.result ?? [];
        const round = (rows: typeof turnRows, label: string, scale = 1) =>
          Object.fromEntries(rows.map((r) => [r.metric[label], Math.round(Number(r.value[1]) * scale)]));
        const out = {
          turns: round(turnRows, 'aep_outcome'),
          // 60 * rate over 1 h: times 60 is the increase over that hour
          tools: round(toolRows, 'gen_ai_tool_name', 60),
          approvals: round(approvalRows, 'aep_approval_choice'),
        };
        return out.turns.finished === finished && out.tools.terminal === byTool.get('terminal') && out.tools.clarify === byTool.get('clarify')
          ? out
          : undefined;
      },
      240_000,
    );
    console.log(`[compose] the last turn's end → its counts in Prometheus: ${Date.now() - t0} ms after this test began; ${JSON.stringify(got)}`);
    expect(got.turns).toEqual({ finished });
    expect(got.approvals).toEqual({ once: E2E_HERMES_VERSIONS.length });
  });

  it("the collector's log (the logs pipeline's debug exporter, basic verbosity: counts only): its log record count equals the events in the history", async () => {
    const count = (logs: string) => [...logs.matchAll(/"log records": (\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
    const t0 = Date.now();
    const expected = events().length;
    const got = await until(
      'the log records at the collector',
      async () => {
        const n = count(await compose(['logs', '--no-color', 'otel-collector']));
        return n === expected ? n : undefined;
      },
      60_000,
    ).catch(async (err: unknown) => {
      throw new Error(`${String(err)}: ${count(await compose(['logs', '--no-color', 'otel-collector']))} records, ${expected} events`);
    });
    console.log(`[compose] log records at the collector: ${got} (= events in the history), ${Date.now() - t0} ms`);
    expect(got).toBe(expected);
  });

  it('docker compose kill hermes-aep between two hooks: the shim answers {} at once and spools; start ingests each spooled hook once', async () => {
    const version = readdirSync(path.join(stateDir(), 'shim'))[0]!;
    const shimFile = path.join(stateDir(), 'shim', version, 'hook.cjs');
    expect(existsSync(shimFile)).toBe(true);
    /** the installed shim, as Hermes runs it: the user's node, the envelope on stdin */
    const shim = (body: string) =>
      new Promise<{ code: number | null; stdout: string; ms: number }>((resolve, reject) => {
        const t0 = Date.now();
        const child = spawn(userNode(), [shimFile, '--url', HOOK_URL], { uid: UID, gid: UID, cwd: home, env: { PATH: process.env.PATH, HOME: home } });
        let stdout = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, ms: Date.now() - t0 }));
        child.stdin.end(body);
      });
    const session = `compose-kill-${process.pid}`;
    const hooks = keyedSession(session, 2);
    const before = hooks.slice(0, 3);
    const during = hooks.slice(3);
    for (const h of before) expect((await shim(h.body)).code).toBe(0);
    await until('the first hooks in the history', async () => (lane(session).length === before.length ? true : undefined), 30_000);

    await timed('docker compose kill hermes-aep', () => compose(['kill', 'hermes-aep']));
    const state = parsePs(await compose(['ps', '-a', '--format', 'json'])).find((c) => c.Service === 'hermes-aep');
    expect(state?.State).toBe('exited');
    const spool = path.join(stateDir(), 'spool');
    for (const h of during) {
      const r = await shim(h.body);
      console.log(`[compose] shim with the daemon killed: ${r.ms} ms`);
      expect([r.code, r.stdout.trim()]).toEqual([0, '{}']);
    }
    const spooled = readdirSync(spool).filter((f) => f.endsWith('.hook'));
    expect(spooled).toHaveLength(during.length);
    for (const f of spooled) expect(statSync(path.join(spool, f)).uid).toBe(UID);

    const t0 = Date.now();
    await timed('docker compose start hermes-aep', () => compose(['start', 'hermes-aep']));
    const mine = await until('the spooled hooks in the history', async () => (lane(session).length >= hooks.length ? lane(session) : undefined), 60_000);
    console.log(`[compose] start → every spooled hook in the history: ${Date.now() - t0} ms`);
    expect(mine.map((e) => eventKey(e))).toEqual(hooks.map((h) => h.key));
    const positions = mine.map((e) => `${e.epoch ?? 0}:${e.seq}`);
    expect(new Set(positions).size).toBe(mine.length);
    expect(streamViolations(mine, { requireCauses: true })).toEqual([]);
    await until('the spool emptied', async () => (readdirSync(spool).filter((f) => f.endsWith('.hook')).length === 0 ? true : undefined), 30_000);
  });
});
