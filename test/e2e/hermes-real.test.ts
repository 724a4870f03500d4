import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startFakeLlm, text, toolCall, type FakeLlm } from './support/fake-llm.js';
import { HermesTty, makeHermesHome, runHermes, type HermesHome } from './support/hermes.js';
import { aepValidator } from '../support/aep-validator.js';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import { startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../support/processes.js';
import { readLogs, streamViolations, type Ev } from '../support/stream-invariants.js';
import { REGISTERED_HOOKS, TELEMETRY_SCHEMA_VERSION } from '../../src/hermes/envelope.js';
import { E2E_HERMES_VERSIONS, HERMES_DRIFT } from './support/hermes-versions.js';

/**
 * The real Hermes Agent drives the installed shim through its own hook
 * dispatcher, against the real daemon, with a scripted fake model on
 * loopback. Assertions are on the daemon's AEP stream (JSONL log), on the raw
 * envelopes it recorded, and on the spans it exported. The suite runs once per
 * release in E2E_HERMES_VERSIONS with the same assertions; where a release
 * differs, the assertion names the version (docs/hermes-drift.md).
 */
describe.each(E2E_HERMES_VERSIONS)('real Hermes %s → shim → daemon', (version) => {
  const drift = HERMES_DRIFT[version];
  let llm: FakeLlm;
  let daemon: DaemonProcess;
  let home: HermesHome;
  const receiver = new OtlpReceiver();
  const recordDir = path.join(tempDir(), 'recorded');
  const runs: Record<string, { code: number; ms: number; stdout: string }> = {};

  const events = (): Ev[] => [...readLogs(daemon.historyDir).values()].flat();
  const recorded = (): any[] =>
    readdirSync(recordDir)
      .flatMap((f) => readFileSync(path.join(recordDir, f), 'utf8').split('\n').filter(Boolean))
      .map((l) => JSON.parse(l));
  const settle = () => waitFor('daemon drained', async () => ((await daemon.health()).sinks.log.queued === 0 ? true : undefined));
  const sessionOf = (callId: string) => events().find((e) => e.data?.tool?.call_id === callId)?.session;

  beforeAll(async () => {
    llm = await startFakeLlm({
      steps: [
        { marker: 'CHILD-GOAL', replies: [text('Child here: done.')] },
        { marker: 'MARK-TERMINAL', replies: [toolCall('terminal', { command: 'echo hello' }, 'call_e2e_term')] },
        { marker: 'MARK-FAIL-READ', replies: [toolCall('read_file', { path: '/nonexistent/hermes-aep/missing.txt' }, 'call_e2e_read')] },
        { marker: 'MARK-CLARIFY', replies: [toolCall('clarify', { question: 'Which colour?', choices: ['red', 'green', 'blue'] }, 'call_e2e_clar')] },
        {
          marker: 'MARK-SUBAGENT',
          // the parent's answer waits so the background child finishes inside the turn
          replies: [
            toolCall('delegate_task', { goal: 'CHILD-GOAL: say hello and stop.', context: 'e2e' }, 'call_e2e_deleg'),
            { type: 'text', content: 'Delegated.', delayMs: 6000 },
          ],
        },
        { marker: 'MARK-DANGER', replies: [toolCall('terminal', { command: 'rm -rf /tmp/hermes-aep-e2e-danger-x' })] },
        { marker: 'MARK-SMART-OK', replies: [toolCall('terminal', { command: 'rm -rf /tmp/hermes-aep-e2e-smart-ok' }, 'call_e2e_smart')] },
        { marker: 'MARK-PLAIN', replies: [text('Plain answer.')] },
      ],
      // Hermes 0.19.0's smart-approval reviewer (a tool-less request): approve the smart-ok
      // command, escalate every other one to the person at the terminal
      auxiliaryReply: (v) =>
        v.messages.some((m) => typeof m.content === 'string' && m.content.includes('security reviewer'))
          ? v.lastUserText.includes('smart-ok')
            ? 'APPROVE'
            : 'ESCALATE'
          : 'Fake session title',
    });
    await receiver.start();
    daemon = await startDaemonProcess({
      AEP_RECORD_DIR: recordDir,
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    // the shim's default derivation: the daemon's socket under the shared state dir, no token
    home = await makeHermesHome({ modelUrl: llm.url, hookEnv: { AEP_STATE_DIR: daemon.stateDir }, version });

    for (const [name, prompt] of [
      ['terminal', 'MARK-TERMINAL run it'],
      ['read', 'MARK-FAIL-READ read it'],
      ['clarify', 'MARK-CLARIFY ask me'],
      ['subagent', 'MARK-SUBAGENT delegate it'],
    ] as const) {
      runs[name] = await runHermes(home, ['-z', prompt]);
    }
    // a multi-turn chat session across two processes (--resume)
    runs.chat1 = await runHermes(home, ['chat', '-q', 'MARK-PLAIN first', '-Q']);
    await settle();
  }, 600_000);

  afterAll(async () => {
    await daemon?.stop();
    await receiver.stop();
    await llm?.close();
  });

  it('every Hermes process exits 0 and the fake model was the only endpoint used', () => {
    for (const [name, r] of Object.entries(runs)) expect([name, r.code]).toEqual([name, 0]);
    expect(llm.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/chat/completions')).length).toBeGreaterThan(5);
  });

  it('the installer wrote what Hermes accepts: every live hook reached the daemon, sentinel aboard', async () => {
    const envs = recorded();
    const hooks = new Set(envs.map((e) => e.hook_event_name));
    for (const h of [
      'on_session_start',
      'pre_llm_call',
      'pre_tool_call',
      'post_tool_call',
      'on_session_end',
      'subagent_start',
      'subagent_stop',
      'on_session_finalize',
    ]) {
      expect(hooks.has(h), h).toBe(true);
    }
    for (const e of envs) expect(e.extra.telemetry_schema_version).toBe(TELEMETRY_SCHEMA_VERSION);
    expect((await daemon.health()).drift).toMatchObject({ missing: 0, mismatched: 0 });
  });

  it('one run per REAL turn_id, and the tool trio carries the real tool_call_id', () => {
    const turns = recorded()
      .filter((e) => e.hook_event_name === 'pre_llm_call')
      .map((e) => e.extra.turn_id);
    const started = events()
      .filter((e) => e.type === 'run.started')
      .map((e) => e.run);
    expect(new Set(started)).toEqual(new Set(turns));
    for (const t of turns) expect(t).toMatch(/^[^:]+:[^:]+:[0-9a-f]{8}$/);
    const ev = events();
    const pair = (id: string) => ev.filter((e) => e.data?.tool?.call_id === id).map((e) => e.type);
    expect(pair('call_e2e_term')).toEqual(['tool.requested', 'tool.completed']);
    expect(pair('call_e2e_read')).toEqual(['tool.requested', 'tool.failed']);
  });

  it('oneshot clarify: the form card opens and resolves auto (no human answered)', () => {
    const ev = events();
    const card = ev.find((e) => e.type === 'attention.requested' && e.data.kind === 'form')!;
    expect(card.data.fields[0]).toMatchObject({ type: 'select', choices: [{ id: '1' }, { id: '2' }, { id: '3' }] });
    const outcome = ev.filter((e) => e.subject === card.id);
    expect(outcome.map((e) => [e.type, e.data.resolution])).toEqual([['attention.resolved', 'auto']]);
  });

  it('delegation: the pair lands on the parent session and turn; the child session is its own', () => {
    const ev = events();
    const started = ev.find((e) => e.type === 'delegation.subagent.started')!;
    const stopped = ev.find((e) => e.type === 'delegation.subagent.stopped')!;
    expect(started.session).toBe(sessionOf('call_e2e_deleg'));
    expect(stopped.cause).toBe(started.id);
    expect(ev.some((e) => e.session === started.subject && e.type === 'session.started')).toBe(true);
    // drift: 0.18.2 dispatches the child in the background; 0.19.0's -z runs it inline,
    // so the child has finished before the delegate_task call returns
    const post = recorded().find((e) => e.hook_event_name === 'post_tool_call' && e.extra.tool_call_id === 'call_e2e_deleg')!;
    const result = JSON.parse(post.extra.result);
    if (drift.oneshotDelegationInline) {
      expect(result.results[0]).toMatchObject({ status: 'completed' });
      expect(ev.findIndex((e) => e.type === 'delegation.subagent.stopped')).toBeLessThan(
        ev.findIndex((e) => e.type === 'tool.completed' && e.data.tool.call_id === 'call_e2e_deleg'),
      );
    } else {
      expect(result).toMatchObject({ status: 'dispatched', mode: 'background' });
    }
  });

  it('every event validates, every session log is sound', () => {
    const validate = aepValidator();
    for (const [file, lane] of readLogs(daemon.historyDir)) {
      for (const e of lane) expect(validate(e), `${file} ${e.type}`).toEqual([]);
      expect(streamViolations(lane, { requireCauses: true }), file).toEqual([]);
    }
  });

  it('each completed turn is one complete trace: its root plus a child span per tool call', async () => {
    await waitFor('spans exported', async () => ((await daemon.health()).sinks.otel.spans_queued === 0 ? true : undefined));
    const ev = events();
    const finished = ev.filter((e) => e.type === 'run.finished');
    expect(finished.length).toBeGreaterThanOrEqual(5);
    for (const f of finished) {
      const root = receiver.spans.find((s) => s.name === 'invoke_agent hermes' && s.attributes['aep.run_id'] === f.run)!;
      expect(root, f.run).toBeDefined();
      expect(f.traceparent).toBe(`00-${root.traceId}-${root.spanId}-01`);
      const calls = ev.filter((e) => e.type === 'tool.requested' && e.run === f.run).map((e) => e.data.tool.call_id);
      const children = receiver.spans.filter((s) => s.parentSpanId === root.spanId && s.name.startsWith('execute_tool'));
      expect(children.map((s) => s.attributes['gen_ai.tool.call.id']).sort()).toEqual(calls.sort());
    }
  });

  it('chat: a second process resumes the session (a second turn); each process finalizes, the session ends once', async () => {
    const session = events().find(
      (e) => e.type === 'run.started' && recorded().some((r) => r.extra?.turn_id === e.run && r.extra?.user_message === 'MARK-PLAIN first'),
    )!.session;
    const r = await runHermes(home, ['chat', '-q', 'MARK-PLAIN second', '-Q', '--resume', session]);
    expect(r.code).toBe(0);
    await settle();
    const lane = events().filter((e) => e.session === session);
    expect(lane.filter((e) => e.type === 'run.started')).toHaveLength(2);
    expect(lane.filter((e) => e.type === 'session.ended')).toHaveLength(1);
    const finalizes = recorded().filter((e) => e.hook_event_name === 'on_session_finalize' && e.session_id === session);
    expect(finalizes).toHaveLength(2);
    expect((await daemon.health()).identity.duplicateTerminals).toBeGreaterThanOrEqual(1);
  });

  it('interactive CLI under tmux: approvals answered deny then once, /new, /exit', async () => {
    const tty = new HermesTty(home);
    const before = new Set(events().map((e) => e.session));
    const cards = () => events().filter((e) => e.type === 'attention.requested' && e.data.kind === 'permission');
    try {
      tty.start();
      await tty.waitScreen('❯', 90_000);
      tty.line('MARK-DANGER clean up please');
      await waitFor('first approval card', () => (cards().length >= 1 ? true : undefined), 60_000);
      await tty.waitScreen('Deny');
      tty.keys('4');
      await waitFor(
        'turn 1 closed',
        () => (events().filter((e) => e.type.startsWith('run.') && e.type !== 'run.started' && !before.has(e.session)).length >= 1 ? true : undefined),
        60_000,
      );
      await tty.waitScreen('❯');
      tty.line('MARK-DANGER once more');
      await waitFor('second approval card', () => (cards().length >= 2 ? true : undefined), 60_000);
      await tty.waitScreen('Allow once');
      tty.keys('Enter');
      await waitFor(
        'turn 2 closed',
        () => (events().filter((e) => e.type.startsWith('run.') && e.type !== 'run.started' && !before.has(e.session)).length >= 2 ? true : undefined),
        60_000,
      );
      await tty.waitScreen('❯');
      if (drift.smartApprovals) {
        // the smart-approval reviewer approves this one itself: no person is asked
        tty.line('MARK-SMART-OK tidy up');
        await waitFor(
          'turn 3 closed',
          () => (events().filter((e) => e.type.startsWith('run.') && e.type !== 'run.started' && !before.has(e.session)).length >= 3 ? true : undefined),
          60_000,
        );
        await tty.waitScreen('❯');
      }
      tty.line('/new');
      await tty.waitScreen('Approve Once', 30_000);
      tty.keys('1');
      await waitFor('reset', () => (events().some((e) => e.type === 'x.hermes.session.reset') ? true : undefined), 30_000);
      tty.line('/exit');
      await waitFor('cli exited', () => (!tty.alive() ? true : undefined), 60_000);
    } finally {
      tty.stop();
    }
    await settle();
    const mine = events().filter((e) => !before.has(e.session));
    const answers = mine.filter((e) => e.type === 'attention.answered').map((e) => e.data.answer.option);
    expect(answers).toEqual(['deny', 'once']);
    const denied = mine.find((e) => e.type === 'attention.answered' && e.data.answer.option === 'deny')!;
    const card = mine.find((e) => e.id === denied.subject)!;
    expect(card).toMatchObject({
      type: 'attention.requested',
      data: { respond_via: ['oob'], options: [{ id: 'once' }, { id: 'session' }, { id: 'always' }, { id: 'deny' }] },
    });
    expect(mine.find((e) => e.id === card.cause)?.type).toBe('tool.requested');
    // the first session ended on /new (finalize), the successor got the reset and ended on /exit
    const ended = mine.filter((e) => e.type === 'session.ended').map((e) => e.session);
    const reset = mine.find((e) => e.type === 'x.hermes.session.reset')!;
    expect(ended).toHaveLength(2);
    expect(ended).toContain(card.session);
    expect(ended).toContain(reset.session);
    // every person-facing card closed by its own answer: none left over for the session's end to dismiss
    expect(mine.filter((e) => e.type === 'attention.resolved' && e.data.resolution === 'dismissed')).toEqual([]);
    // drift: 0.19.0 asks an auxiliary model first (smart approvals, its default); here the
    // reviewer escalates both dangerous commands to the person and approves the smart-ok one itself
    const surfaces = recorded()
      .filter((e) => e.hook_event_name === 'pre_approval_request' && e.extra?.telemetry_schema_version !== undefined)
      .map((e) => e.extra.surface);
    const reviews = mine.filter((e) => e.type === 'x.hermes.approval.review.requested');
    const verdicts = mine.filter((e) => e.type === 'assessment.guardrail.recorded');
    if (drift.smartApprovals) {
      expect(surfaces).toEqual(['smart', 'cli', 'smart', 'cli', 'smart']);
      expect(reviews).toHaveLength(3);
      for (const r of reviews) expect(mine.find((e) => e.id === r.cause)?.type).toBe('tool.requested');
      expect(verdicts.map((e) => e.data.guardrail)).toEqual([
        { stage: 'input', verdict: 'allowed', categories: [expect.any(Object)], detector: { name: 'aux_llm' } },
      ]);
      expect(mine.find((e) => e.id === verdicts[0]!.cause)?.data.tool.call_id).toBe('call_e2e_smart');
      expect(mine.filter((e) => e.data?.tool?.call_id === 'call_e2e_smart').map((e) => e.type)).toEqual(['tool.requested', 'tool.completed']);
    } else {
      expect(surfaces).toEqual(['cli', 'cli']);
      expect([...reviews, ...verdicts]).toEqual([]);
    }
    expect(cards().filter((c) => !before.has(c.session))).toHaveLength(2);
    for (const lane of readLogs(daemon.historyDir).values()) expect(streamViolations(lane, { requireCauses: true })).toEqual([]);
  });

  it('hermes hooks test fires each of the twelve events through the installed shim; its payloads lack the sentinel', async () => {
    const before = (await daemon.health()).drift.missing as number;
    for (const event of REGISTERED_HOOKS) {
      const r = await runHermes(home, ['hooks', 'test', event]);
      expect([event, r.code]).toEqual([event, 0]);
    }
    await settle();
    const h = await daemon.health();
    expect(h.drift.missing - before).toBe(REGISTERED_HOOKS.length);
    const synthetic = recorded()
      .filter((e) => e.extra?.telemetry_schema_version === undefined)
      .map((e) => e.hook_event_name);
    expect(new Set(synthetic)).toEqual(new Set(REGISTERED_HOOKS));
  });
});
