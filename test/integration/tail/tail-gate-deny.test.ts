// An operator's deny reads as one in `tail`: the daemon's history of a gate deny (the card, the answer, Hermes's
// report of the blocked call as `tool.denied` by "policy", as the schema wants it) rendered by tail over the real
// daemon's stream: "denied by the operator (gate)" with the operator's reason; a block by a Hermes-side policy
// (no card) keeps `by=policy` and its rule.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { plainStyler } from '../../../src/tail/color.js';
import { compileLocalFilter } from '../../../src/tail/local-filter.js';
import type { TailPlan } from '../../../src/tail/options.js';
import { runTail } from '../../../src/tail/tail.js';
import type { WsConsumer } from '../../support/aep-stream-client.js';
import { commandOf, events, HOLD, hook, operator, postHook, startRig, type Rig } from '../../support/control-rig.js';
import { waitFor } from '../../support/processes.js';

let rig: Rig | undefined;
const ops: WsConsumer[] = [];
afterEach(async () => {
  for (const c of ops.splice(0)) c.close();
  await rig?.close();
  rig = undefined;
});

/** Hermes's post of a call it blocked (a blocking hook's message as the error) */
function blockedPost(session: string, call: string, message: string): string {
  const post = JSON.parse(hook('post_tool_call', session, { call })) as Record<string, any>;
  post['extra'] = { ...post['extra'], status: 'blocked', error_type: 'plugin_block', error_message: message, result: JSON.stringify({ error: message }) };
  return JSON.stringify(post);
}

describe('tail: a deny by the operator gate', () => {
  it('reads "denied by the operator (gate)" with the reason; a Hermes-side policy block keeps by=policy', async () => {
    rig = await startRig({ AEP_HERMES_CONTROL: '1', AEP_CAPTURE: 'redacted' });
    const sock = rig.env['AEP_SOCKET']!;
    const op = await operator(rig);
    ops.push(op);
    const gated = '20261204_100000_gate01';
    const policy = '20261204_100000_plcy01';
    for (const s of [gated, policy]) for (const h of ['on_session_start', 'pre_llm_call']) expect((await postHook(sock, hook(h, s))).status).toBe(200);
    // the operator's deny of a held call
    const reply = postHook(sock, hook('pre_tool_call', gated, { call: 'call_1', tool: 'terminal' }), HOLD);
    const card = await waitFor('the gate card', () =>
      events(op).find((e) => e['type'] === 'attention.requested' && e['session'] === gated && e['data']?.respond_via?.includes('control')),
    );
    op.send(commandOf('control.attention.respond', gated, { answer: { option: 'deny', text: 'not on prod' } }, { subject: card['id'] }));
    expect(JSON.parse((await reply).body)).toEqual({ action: 'block', message: 'not on prod' });
    expect((await postHook(sock, blockedPost(gated, 'call_1', 'not on prod'))).status).toBe(200);
    // a block by Hermes's own policy hook: no card (the transport held nothing)
    expect((await postHook(sock, hook('pre_tool_call', policy, { call: 'call_2', tool: 'terminal' }))).status).toBe(200);
    expect((await postHook(sock, blockedPost(policy, 'call_2', 'rm is not allowed here'))).status).toBe(200);
    // the AEP events stay as the schema wants them
    expect(rig.history(gated).at(-1)).toMatchObject({ type: 'tool.denied', data: { by: 'policy' } });

    const f = compileLocalFilter({ type: ['attention.*', 'tool.*'] });
    if ('error' in f) throw new Error(f.error);
    const plan: TailPlan = {
      target: { kind: 'socket', path: sock },
      historyRoot: path.join(rig.env['AEP_LOG_DIR']!),
      filter: JSON.stringify({ type: ['attention.*', 'tool.*'] }),
      localFilter: f.filter,
      from: 'all',
      json: false,
      follow: false,
    };
    const out: string[] = [];
    const err: string[] = [];
    expect(await runTail(plan, { out: (l) => out.push(l), err: (l) => err.push(l), style: plainStyler }, new AbortController().signal)).toBe(0);
    const denied = out.filter((l) => l.includes('tool.denied'));
    expect(denied).toHaveLength(2);
    const [byGate, byPolicy] = [denied.find((l) => l.includes('gate01'))!, denied.find((l) => l.includes('plcy01'))!];
    expect(byGate).toMatch(/tool\.denied terminal denied by the operator \(gate\) reason="not on prod"/);
    expect(byGate).not.toContain('by=policy');
    expect(byPolicy).toMatch(/tool\.denied terminal by=policy rule=rm is not allowed here/);
    expect(byPolicy).not.toContain('operator');
    expect(err).toEqual([]);
  });
});
