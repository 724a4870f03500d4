// `hermes-aep answer` / `instruct` against the real daemon process. Gates off, its control target nacks every
// command for its own sessions `unsupported` in the session's history (an Event whose cause is the command id),
// printed `rejected: unsupported`, exit 1; gates on, an instruction is accepted and a held call answered from
// the terminal. The card lookup runs against what the daemon really holds: an unknown card, and Hermes's own
// (observed, `oob`) approval card.
import { execFile } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planControl, runAnswer, runInstruct } from '../../src/control-cli/control-cli.js';
import { CLI } from '../support/paths.js';
import { httpCall, startDaemonProcess, waitFor, type DaemonProcess } from '../support/processes.js';
import { scriptedSession } from '../support/scripted-session.js';

const run = promisify(execFile);
const TOKEN = 'control-daemon-token-0123456789';
// the nack's detail is redacted-class: at the default metadata ceiling the reason rides alone
const REFUSAL = 'rejected: unsupported';
// what a person does about it: the switch, on the daemon and in the installed hooks
const INSTRUCT_HINT =
  "hermes-aep instruct: the session's daemon takes no instructions (steering is off): start it with AEP_INSTRUCT=1, and install the hooks with `hermes-aep install --instruct` (docs/control.md)";
const ANSWER_HINT =
  "hermes-aep answer: the session's daemon takes no answers (its control gate is off): start it with AEP_HERMES_CONTROL=1, and install the hooks with `hermes-aep install --control` (docs/control.md)";

describe('hermes-aep answer / instruct on a running daemon', () => {
  let d: DaemonProcess;
  const s = scriptedSession('20261201_101500_c0ffee');
  let oobCard = '';

  beforeAll(async () => {
    d = await startDaemonProcess({ AEP_TOKEN: TOKEN });
    // the session up to Hermes's own approval prompt: a live own session holding an observed (oob) card
    const upTo = s.envelopes.findIndex((e) => e.hook_event_name === 'pre_approval_request');
    for (const e of s.envelopes.slice(0, upTo + 1)) {
      const r = await httpCall(
        { socketPath: d.socketPath },
        { method: 'POST', path: '/hook', headers: { host: 'localhost', 'content-type': 'application/json' }, body: JSON.stringify(e) },
      );
      expect(r.status).toBe(200);
    }
    oobCard = await waitFor('the approval card in the stream', async () => {
      const r = await httpCall(
        { socketPath: d.socketPath },
        { path: `/stream?from=all&live=0&filter=${encodeURIComponent('{"type":"attention.requested"}')}`, headers: { host: 'localhost' } },
      );
      const line = r.body.split('\n').find((l) => l.startsWith('data: '));
      return line ? (JSON.parse(line.slice(6)) as { id: string }).id : undefined;
    });
  });
  afterAll(async () => {
    await d?.stop();
  });

  const cli = (args: string[], env: Record<string, string> = {}) =>
    run(process.execPath, [CLI, ...args], { env: { ...process.env, AEP_STATE_DIR: d.stateDir, AEP_TOKEN: '', NO_COLOR: '1', ...env }, timeout: 20_000 }).then(
      (r) => ({ code: 0, ...r }),
      (e: unknown) => {
        const x = e as { code: number; stdout: string; stderr: string };
        return { code: x.code, stdout: x.stdout, stderr: x.stderr };
      },
    );

  it('instruct over the Unix socket (no token), gates off: rejected: unsupported, exit 1, and how to turn steering on', async () => {
    const r = await cli(['instruct', s.session, 'run the tests first']);
    expect([r.code, r.stdout, r.stderr]).toEqual([1, `${REFUSAL}\n`, `${INSTRUCT_HINT}\n`]);
  });

  it("the nack is an Event of the session whose cause is the command's id (--json prints it as received)", async () => {
    const id = '01JZ5R7Q1B8N6T3X0V9W2Y4K3M';
    const plan = planControl({ json: true }, { ...process.env, AEP_STATE_DIR: d.stateDir, AEP_TOKEN: '' });
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
    const code = await runInstruct(s.session, ['hello'], { ...plan, ctx: { ...plan.ctx, newId: () => id } }, io, new AbortController().signal);
    expect([code, err]).toEqual([1, []]);
    expect(out).toHaveLength(1);
    expect(JSON.parse(out[0]!)).toMatchObject({ type: 'control.rejected', session: s.session, agent: 'hermes', cause: id, data: { reason: 'unsupported' } });
    // answer --session takes the same path, its envelope accepted by the daemon's validator (an invalid one would be invalid-event)
    const answered: string[] = [];
    const code2 = await runAnswer(
      'C1',
      'deny',
      ['not', 'on', 'prod'],
      { session: s.session },
      { ...plan, json: false, ctx: { ...plan.ctx, newId: () => `${id.slice(0, -1)}N` } },
      { out: (l) => answered.push(l), err: (l) => err.push(l) },
      new AbortController().signal,
    );
    expect([code2, answered, err]).toEqual([1, [REFUSAL], [ANSWER_HINT]]);
  });

  it('over TCP with the token: the same nack; the token never printed', async () => {
    const r = await cli(['answer', '--url', d.url, '--session', s.session, oobCard, 'allow'], { AEP_TOKEN: TOKEN });
    expect([r.code, r.stdout, r.stderr]).toEqual([1, `${REFUSAL}\n`, `${ANSWER_HINT}\n`]);
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });

  it("the card lookup: Hermes's own approval card is observed only; an unknown card is not held; both exit 2", async () => {
    const oob = await cli(['answer', oobCard, 'deny', 'no']);
    expect([oob.code, oob.stdout]).toEqual([2, '']);
    expect(oob.stderr).toBe(`hermes-aep answer: card ${oobCard} is observed only (its respond_via has no "control"): answer it where it was asked\n`);
    const missing = await cli(['answer', '01JZNOTHELD000000000000000', 'allow']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no card 01JZNOTHELD000000000000000 among the events the daemon holds');
  });

  it('a session the daemon does not own and nobody claims: refused: no-route', async () => {
    const r = await cli(['instruct', `nobody-${os.hostname()}`, 'hi']);
    expect([r.code, r.stdout]).toEqual([1, 'refused: no-route (no connected emitter claims this session)\n']);
  });
});

describe('hermes-aep answer / instruct with the gates on', () => {
  let d: DaemonProcess;
  afterAll(async () => {
    await d?.stop();
  });
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    httpCall(
      { socketPath: d.socketPath },
      { method: 'POST', path: '/hook', headers: { host: 'localhost', 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) },
    );

  it('instruct is accepted; a held call answered deny from the terminal blocks it with the reason', async () => {
    d = await startDaemonProcess({ AEP_TOKEN: TOKEN, AEP_HERMES_CONTROL: '1', AEP_INSTRUCT: '1' });
    const s = scriptedSession('20261201_103000_ab12cd');
    const pre = s.envelopes.findIndex((e) => e.hook_event_name === 'pre_tool_call');
    for (const e of s.envelopes.slice(0, pre)) expect((await post(e)).status).toBe(200);
    const env = { ...process.env, AEP_STATE_DIR: d.stateDir, AEP_TOKEN: '', NO_COLOR: '1' };
    const instruct = await run(process.execPath, [CLI, 'instruct', s.session, 'run the tests first'], { env, timeout: 20_000 });
    expect(instruct.stdout).toBe('accepted\n');
    const held = post(s.envelopes[pre], { 'x-hermes-aep-hold-ms': '58000' });
    const card = await waitFor('the gate card', async () => {
      const r = await httpCall(
        { socketPath: d.socketPath },
        { path: `/stream?from=all&live=0&filter=${encodeURIComponent('{"type":"attention.requested"}')}`, headers: { host: 'localhost' } },
      );
      const line = r.body.split('\n').find((l) => l.startsWith('data: ') && l.includes('"control"'));
      return line ? (JSON.parse(line.slice(6)) as { id: string }).id : undefined;
    });
    const answer = await run(process.execPath, [CLI, 'answer', card, 'deny', 'not', 'on', 'prod'], { env, timeout: 20_000 });
    expect(answer.stdout).toBe('accepted\nanswered: deny "not on prod"\n');
    const reply = await held;
    expect(JSON.parse(reply.body)).toEqual({ action: 'block', message: 'not on prod' });
  });
});
