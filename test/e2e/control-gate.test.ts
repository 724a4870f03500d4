import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentText, startFakeLlm, text, toolCall, type ChatRequest, type FakeLlm } from './support/fake-llm.js';
import { makeHermesHome, runHermes, type HermesHome } from './support/hermes.js';
import { E2E_HERMES_VERSIONS } from './support/hermes-versions.js';
import { CLI } from '../support/paths.js';
import { httpCall, startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../support/processes.js';
import { readLogs, type Ev } from '../support/stream-invariants.js';

const run = promisify(execFile);
/** short, so the expiry case runs in seconds; the shim waits it plus 3 s, and install writes a Hermes timeout above that */
const HOLD_MS = 8_000;
const GATES = { AEP_HERMES_CONTROL: '1', AEP_INSTRUCT: '1', AEP_ATTENTION_TIMEOUT_MS: String(HOLD_MS) };

/**
 * The opt-in control gate against the real Hermes (each release in E2E_HERMES_VERSIONS): the fake model asks
 * for a `terminal` call, the installed shim (gates on in Hermes's environment) holds it at the daemon, and an
 * operator answers from a terminal with `hermes-aep answer`; steering is queued with `hermes-aep instruct` and
 * must reach the model in the next turn's request, once.
 */
// both hook transports: the shell shim (default) and the zero-spawn plugin (`install --transport plugin`)
const CASES = E2E_HERMES_VERSIONS.flatMap((version) => (['shell', 'plugin'] as const).map((transport) => [version, transport] as const));

describe.each(CASES)('real Hermes %s, %s transport: the control gate and steering', (version, transport) => {
  let llm: FakeLlm;
  let daemon: DaemonProcess;
  let home: HermesHome;
  const scratch = tempDir('hermes-aep-e2e-gate-');
  const marker = (name: string) => path.join(scratch, `${name}.ran`);
  const events = (): Ev[] => [...readLogs(daemon.historyDir).values()].flat();
  const cli = (args: string[]) =>
    run(process.execPath, [CLI, ...args], { env: { ...process.env, AEP_STATE_DIR: daemon.stateDir, NO_COLOR: '1' }, timeout: 30_000 });
  /** the requests the fake model got for the step that matched `step` */
  const requestsOf = (step: string) => llm.requests.filter((r) => r.step === step).map((r) => r.body as ChatRequest);

  beforeAll(async () => {
    llm = await startFakeLlm({
      steps: [
        { marker: 'MARK-GATE-DENY', replies: [toolCall('terminal', { command: `touch ${marker('deny')}` }, 'call_gate_deny')] },
        { marker: 'MARK-GATE-ALLOW', replies: [toolCall('terminal', { command: `touch ${marker('allow')}` }, 'call_gate_allow')] },
        { marker: 'MARK-GATE-EXPIRE', replies: [toolCall('terminal', { command: `touch ${marker('expire')}` }, 'call_gate_expire')] },
        { marker: 'MARK-STEER', replies: [text('Steered answer.')] },
      ],
    });
    daemon = await startDaemonProcess(GATES);
    home = await makeHermesHome({
      modelUrl: llm.url,
      hookEnv: { AEP_STATE_DIR: daemon.stateDir, ...GATES },
      version,
      installArgs: ['--control', '--instruct'],
    });
  }, 600_000);

  afterAll(async () => {
    await daemon?.stop();
    await llm?.close();
  });

  /** the daemon's pending answerable card for a call, once raised */
  const cardFor = (callId: string) =>
    waitFor(
      `the gate card of ${callId}`,
      async () => {
        const r = await httpCall(
          { socketPath: daemon.socketPath },
          { path: `/stream?from=all&live=0&filter=${encodeURIComponent('{"type":"attention.requested"}')}`, headers: { host: 'localhost' } },
        );
        const cards = r.body
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => JSON.parse(l.slice(6)) as Ev);
        const requested = events().find((e) => e.type === 'tool.requested' && e.data?.tool?.call_id === callId);
        return requested ? cards.find((c) => c.cause === requested.id && c.data?.respond_via?.includes('control')) : undefined;
      },
      60_000,
    );

  it('deny "not on prod": Hermes reports the call blocked with that message, the command never runs, and the model’s next request carries it', async () => {
    const turn = runHermes(home, ['-z', 'MARK-GATE-DENY run it']);
    const card = await cardFor('call_gate_deny');
    const answered = await cli(['answer', card.id, 'deny', 'not on prod']);
    expect(answered.stdout).toBe('accepted\nanswered: deny "not on prod"\n');
    const r = await turn;
    expect(r.code).toBe(0);
    expect(existsSync(marker('deny'))).toBe(false);
    // the model's request after the tool call holds the tool message with the block message
    const after = requestsOf('MARK-GATE-DENY').find((b) => (b.messages ?? []).some((m) => m.role === 'tool' && m.tool_call_id === 'call_gate_deny'));
    const toolMsg = after!.messages!.find((m) => m.role === 'tool' && m.tool_call_id === 'call_gate_deny')!;
    expect(contentText(toolMsg.content)).toContain('not on prod');
    await waitFor('the post', () => events().find((e) => e.type === 'tool.denied' && e.data?.tool?.call_id === 'call_gate_deny'));
    const denied = events().find((e) => e.type === 'tool.denied' && e.data?.tool?.call_id === 'call_gate_deny')!;
    expect(denied.data.by).toBe('policy');
    const outcome = events().filter((e) => e.subject === card.id && e.agent === 'hermes');
    expect(outcome.map((e) => e.type)).toEqual(['attention.answered', 'attention.resolved']);
    expect(outcome[0]!.data).toMatchObject({ answer: { option: 'deny' }, via: 'control' });
  });

  it('allow: the command runs (the gate releases it into Hermes’s own gates)', async () => {
    const turn = runHermes(home, ['-z', 'MARK-GATE-ALLOW run it']);
    const card = await cardFor('call_gate_allow');
    expect((await cli(['answer', card.id, 'allow'])).stdout).toBe('accepted\nanswered: allow\n');
    expect((await turn).code).toBe(0);
    expect(existsSync(marker('allow'))).toBe(true);
    await waitFor('the post', () => events().find((e) => e.type === 'tool.completed' && e.data?.tool?.call_id === 'call_gate_allow'));
  });

  it('expiry: unanswered, the call runs after the hold window', async () => {
    const t0 = Date.now();
    const r = await runHermes(home, ['-z', 'MARK-GATE-EXPIRE run it']);
    expect(r.code).toBe(0);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(HOLD_MS);
    expect(existsSync(marker('expire'))).toBe(true);
    const card = await cardFor('call_gate_expire');
    await waitFor('the timeout', () => events().find((e) => e.type === 'attention.timeout' && e.subject === card.id));
  });

  it('an instruction queued with hermes-aep instruct reaches the model in the next turn’s request, exactly once', async () => {
    const known = new Set(events().map((e) => e.session));
    const first = await runHermes(home, ['chat', '-q', 'MARK-STEER first', '-Q']);
    expect(first.code).toBe(0);
    const session = await waitFor('the chat session', () => events().find((e) => e.type === 'run.started' && !known.has(e.session))?.session);
    const steer = `STEER-${version}-${transport}-keep answers short`;
    expect((await cli(['instruct', session, steer])).stdout).toBe('accepted\n');
    const before = llm.requests.length;
    const second = await runHermes(home, ['chat', '-q', 'MARK-STEER second', '-Q', '--resume', session]);
    expect(second.code).toBe(0);
    const third = await runHermes(home, ['chat', '-q', 'MARK-STEER third', '-Q', '--resume', session]);
    expect(third.code).toBe(0);
    const lastUser = (b: ChatRequest) => contentText([...(b.messages ?? [])].reverse().find((m) => m.role === 'user')?.content);
    const turnRequests = llm.requests
      .slice(before)
      .filter((r) => r.step === 'MARK-STEER')
      .map((r) => r.body as ChatRequest);
    const secondTurn = turnRequests.filter((b) => lastUser(b).includes('MARK-STEER second'));
    const thirdTurn = turnRequests.filter((b) => lastUser(b).includes('MARK-STEER third'));
    expect(secondTurn.length).toBeGreaterThan(0);
    // in the second turn's user message, once
    expect(lastUser(secondTurn[0]!).split(steer).length - 1).toBe(1);
    // and never again: the third turn's user message does not carry it
    expect(thirdTurn.every((b) => !lastUser(b).includes(steer))).toBe(true);
    const delivered = events().filter((e) => e.session === session && e.type === 'x.hermes.instruction.delivered');
    expect(delivered).toHaveLength(1);
  });
});
