import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultPolicy } from '../../../src/capture/policy.js';
import { hookEnvelopeSchema, REGISTERED_HOOKS } from '../../../src/hermes/envelope.js';
import { readHook } from '../../../src/mapping/map-hook.js';
import { FirstTokenStep, MAX_OPEN_STREAMS } from '../../../src/usage/first-token-step.js';
import { installedHooks } from '../../../src/install/model-calls.js';
import { chatAttrs } from '../../../src/otel/span-attributes.js';
import { measure, Pairing } from '../../../src/otel/metrics/measurements.js';
import { inProcessDaemon } from '../../support/in-process-daemon.js';
import { ROOT } from '../../support/paths.js';

/**
 * Issue 25 item 2: first-token time from Hermes's stream hooks, joined to the
 * model call by (turn_id, iteration ↔ api_call_count), over the reconstructed
 * 0.21 turn (fixtures/hermes-reconstructed-0.21/aux-title-session.json).
 */
type Envelope = { hook_event_name: string; session_id: string; extra: Record<string, unknown> };
const FIXTURE = path.join(ROOT, 'fixtures', 'hermes-reconstructed-0.21', 'aux-title-session.json');
const hooks = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as { hooks: Envelope[] }).hooks;
const policy = defaultPolicy();
const read = (e: Envelope) => readHook(hookEnvelopeSchema.parse(e), policy);

/** Feeds the hooks at the given receive times (ms), returns each model call's first_token_ms by api_call. */
function run(step: FirstTokenStep, timed: [Envelope, number][]): Map<number | string, unknown> {
  const out = new Map<number | string, unknown>();
  for (const [e, t] of timed)
    for (const ev of step.apply(read(e), t).events) {
      if (ev.type !== 'x.hermes.model.call') continue;
      const d = ev.data as { api_call?: number; aux_task?: string; first_token_ms?: number };
      out.set(d.aux_task ?? d.api_call ?? '?', d.first_token_ms);
    }
  return out;
}

describe('first-token time of a streamed model call', () => {
  it('from stream start to the first TEXT delta (reasoning skipped), or to the end when no text came; aux calls untimed', () => {
    const got = run(
      new FirstTokenStep(),
      hooks.map((e, i): [Envelope, number] => [e, 10_000 + i * 1000 + (e.hook_event_name === 'on_stream_delta' ? 7 : 0)]),
    );
    // iteration 1: start at hook 3, first text delta at hook 5 (+7 ms); iteration 2: start at 12, end at 13
    expect(got.get(1)).toBe(2007);
    expect(got.get(2)).toBe(1000);
    expect(got.get('title_generation')).toBeUndefined();
  });

  it('joined by turn and call index: a stream of another turn, or another index, times nothing', () => {
    const other = (e: Envelope, patch: Record<string, unknown>): Envelope => ({ ...e, extra: { ...e.extra, ...patch } });
    const step = new FirstTokenStep();
    const start = hooks.find((h) => h.hook_event_name === 'on_stream_start')!;
    const text = hooks.find((h) => h.hook_event_name === 'on_stream_delta' && h.extra.kind === 'text')!;
    const call1 = hooks.find((h) => h.hook_event_name === 'post_api_request')!;
    const got = run(step, [
      [other(start, { turn_id: 'S:other:turn' }), 0],
      [other(text, { turn_id: 'S:other:turn' }), 50],
      [other(start, { iteration: 9 }), 100],
      [other(text, { iteration: 9 }), 150],
      [call1, 200],
    ]);
    expect(got.get(1)).toBeUndefined();
  });

  it('text that arrives after its call (stream hooks come from worker threads) leaves that call untimed, and the later text is no call', () => {
    const step = new FirstTokenStep();
    const [start, , text] = hooks.filter((h) => h.hook_event_name.startsWith('on_stream_'));
    const call1 = hooks.find((h) => h.hook_event_name === 'post_api_request')!;
    expect(
      run(step, [
        [start!, 0],
        [call1, 10],
        [text!, 20],
      ]).get(1),
    ).toBeUndefined();
    expect(step.size).toBe(0);
  });

  it('streams waiting for their call are bounded', () => {
    const step = new FirstTokenStep();
    const start = hooks.find((h) => h.hook_event_name === 'on_stream_start')!;
    for (let i = 0; i < MAX_OPEN_STREAMS + 50; i++) step.apply(read({ ...start, extra: { ...start.extra, iteration: i + 1 } }), i);
    expect(step.size).toBe(MAX_OPEN_STREAMS);
  });

  it('through the daemon: the call carries it, the chat span and the histogram too; no stream hook writes an event', async () => {
    const d = inProcessDaemon();
    for (const e of hooks) expect((await d.app.inject({ method: 'POST', url: '/hook', payload: e })).statusCode).toBe(200);
    await d.app.close();
    const calls = d.memory.events.filter((e) => e.type === 'x.hermes.model.call');
    const first = calls.find((e) => (e.data as { api_call?: number }).api_call === 1 && !(e.data as { aux_task?: string }).aux_task)!;
    const ms = (first.data as { first_token_ms?: number }).first_token_ms;
    console.log(`first_token_ms through the in-process daemon: ${ms}`);
    expect(typeof ms).toBe('number');
    expect(chatAttrs(first)['hermes.first_token_ms']).toBe(ms);
    const m = measure(first, new Pairing()).filter((x) => x.id === 'firstToken');
    expect(m).toHaveLength(1);
    expect(m[0]!.value).toBe(ms! / 1000);
    expect(d.memory.events.some((e) => e.type.includes('stream'))).toBe(false);
  });
});

describe('on_stream_delta fires once per chunk: never registered on a transport that spawns a process per hook', () => {
  it('the shell installer (and the hooks every transport registers) never lists a stream hook', () => {
    for (const opts of [{}, { modelCalls: false }, { modelCalls: true }]) {
      const hooksOf = installedHooks(opts);
      for (const h of ['on_stream_delta', 'on_stream_start', 'on_stream_end', 'on_room_member_activity', 'on_kanban_dispatch_tick'])
        expect(hooksOf, h).not.toContain(h);
    }
    expect(REGISTERED_HOOKS as readonly string[]).not.toContain('on_stream_delta');
  });
});
