import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inProcessDaemon } from '../../support/in-process-daemon.js';
import { ROOT } from '../../support/paths.js';
import type { PriceSource } from '../../../src/usage/price-step.js';
import type { Cost } from '../../../src/usage/pricer.js';
import type { AepEvent } from '../../../src/aep/event.js';
import { chatAttrs } from '../../../src/otel/span-attributes.js';
import { isRunUsageState, loadRunUsage, runTotals, saveRunUsage } from '../../../src/identity/run-usage.js';
import { aepValidator } from '../../support/aep-validator.js';

/**
 * Issue 25 item 1's done-when: a reconstructed Hermes 0.21 turn
 * (fixtures/hermes-reconstructed-0.21/aux-title-session.json, its provenance in
 * its `$comment`) replayed through the daemon's wiring in process. The turn's
 * terminal sums the auxiliary title-generation call's tokens and cost with the
 * main-loop calls', and equals the same turn without it plus the aux amounts.
 */
type Envelope = { hook_event_name: string; session_id: string; extra: Record<string, unknown> };
const FIXTURE = path.join(ROOT, 'fixtures', 'hermes-reconstructed-0.21', 'aux-title-session.json');
const hooks = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as { hooks: Envelope[] }).hooks;

/** A fixed price list (USD per token, output twice input): every model of the fixture has one. */
const PER: Record<string, number> = { 'openai/gpt-4o-mini': 1e-6, 'google/gemini-2.5-flash': 3e-7 };
const pricer: PriceSource = {
  price: ({ model, usage }): Cost | undefined => {
    const per = model !== undefined ? PER[model] : undefined;
    if (per === undefined) return undefined;
    const prompt = (usage['gen_ai.usage.input_tokens'] ?? 0) * per;
    const completion = (usage['gen_ai.usage.output_tokens'] ?? 0) * per * 2;
    return { currency: 'USD', total: prompt + completion, prompt, completion };
  },
};

async function replay(envelopes: readonly Envelope[]): Promise<AepEvent[]> {
  const d = inProcessDaemon({ pricer });
  for (const e of envelopes) expect((await d.app.inject({ method: 'POST', url: '/hook', payload: e })).statusCode).toBe(200);
  await d.app.close();
  return d.memory.events;
}

const TOKENS = ['gen_ai.usage.input_tokens', 'gen_ai.usage.output_tokens', 'gen_ai.usage.cache_read.input_tokens'] as const;
const finished = (evs: AepEvent[]) => evs.find((e) => e.type === 'run.finished')!.data as Record<string, number> & { cost: Cost };
const round = (x: number) => Math.round(x * 1e9) / 1e9;

describe('an auxiliary model call counts toward its turn (reconstructed Hermes 0.21)', () => {
  it("the turn's tokens and cost = the same turn without the aux call + the aux call's own", async () => {
    const withAux = await replay(hooks);
    const withoutAux = await replay(hooks.filter((h) => !h.hook_event_name.endsWith('_auxiliary_call')));
    const aux = withAux.filter((e) => e.type === 'x.hermes.model.call' && (e.data as { aux_task?: string }).aux_task !== undefined);
    expect(aux).toHaveLength(1);
    const a = aux[0]!;
    const turn = (hooks[1]!.extra.turn_id as string) ?? '';
    expect(a.run).toBe(turn);
    expect(a.data).toMatchObject({
      aux_task: 'title_generation',
      model: 'google/gemini-2.5-flash',
      api_request_id: 'aux-3f2a9c1d',
      'gen_ai.usage.input_tokens': 180,
      'gen_ai.usage.output_tokens': 12,
      cost: { currency: 'USD' },
    });
    // the aux task rides the chat span too; the event stays valid against the vendor schema
    expect(chatAttrs(a)).toMatchObject({ 'hermes.aux_task': 'title_generation', 'gen_ai.request.model': 'google/gemini-2.5-flash' });
    const validate = aepValidator();
    for (const e of withAux) expect(validate(e), e.type).toEqual([]);
    const auxCost = (a.data as { cost: Cost }).cost;
    const w = finished(withAux);
    const wo = finished(withoutAux);
    for (const k of TOKENS) expect(w[k], k).toBe((wo[k] ?? 0) + ((a.data as Record<string, number>)[k] ?? 0));
    expect(w['gen_ai.usage.input_tokens']).toBe(1200 + 1350 + 180);
    expect(w.cost.total).toBe(round(wo.cost.total + auxCost.total));
    expect(w.cost.prompt).toBe(round(wo.cost.prompt! + auxCost.prompt!));
    expect(w.cost.completion).toBe(round(wo.cost.completion! + auxCost.completion!));
    expect(w.cost.total).toBeGreaterThan(wo.cost.total);
    // the pre hook adds no event: the post carries the call
    expect(withAux.length - withoutAux.length).toBe(1);
  });

  it('a streamed aux call (usage None) counts as a call with unknown tokens: no token sum change, no run cost, counted', async () => {
    const streamed = hooks.map((h) =>
      h.hook_event_name === 'post_auxiliary_call' ? { ...h, extra: { ...h.extra, streaming: true, usage: null, response: null, finish_reason: null } } : h,
    );
    const evs = await replay(streamed);
    const without = await replay(hooks.filter((h) => !h.hook_event_name.endsWith('_auxiliary_call')));
    const call = evs.find((e) => e.type === 'x.hermes.model.call' && (e.data as { aux_task?: string }).aux_task)!;
    expect(call.data).toMatchObject({ aux_task: 'title_generation', usage_unknown: true });
    expect(call.data).not.toHaveProperty('gen_ai.usage.input_tokens');
    expect(call.data).not.toHaveProperty('cost');
    expect(chatAttrs(call)).toMatchObject({ 'hermes.usage_unknown': true });
    expect(chatAttrs(call)).not.toHaveProperty('gen_ai.usage.input_tokens');
    expect(aepValidator()(call)).toEqual([]);
    const w = finished(evs);
    const wo = finished(without);
    // the known calls' tokens stay (a lower bound), the run's cost is unknown (absent, never a partial sum), the call is counted
    for (const k of TOKENS) expect(w[k], k).toBe(wo[k]);
    expect(w).not.toHaveProperty('cost');
    expect(w.calls_without_usage).toBe(1);
    expect(wo).not.toHaveProperty('calls_without_usage');
  });

  it('an aux call outside any turn (turn_id "") belongs to no run, even while one is open in its session', async () => {
    const outside = hooks.map((h) => (h.hook_event_name.endsWith('_auxiliary_call') ? { ...h, extra: { ...h.extra, turn_id: '', task_id: '' } } : h));
    // delivered while the turn is still open: before its on_session_end
    const evs = await replay(outside);
    const call = evs.find((e) => e.type === 'x.hermes.model.call' && (e.data as { aux_task?: string }).aux_task)!;
    expect(call.run).toBeUndefined();
    const without = await replay(hooks.filter((h) => !h.hook_event_name.endsWith('_auxiliary_call')));
    expect(finished(evs)).toEqual(finished(without));
  });
});

describe('a run sum with calls without usage survives a snapshot', () => {
  it('saved with its count (a fifth member), read back equal; a four-member state still reads', () => {
    const u = { calls: 3, unpriced: 1, usage: { 'gen_ai.usage.input_tokens': 10 }, unmetered: 1 };
    const saved = saveRunUsage(u);
    expect(saved).toHaveLength(5);
    expect(isRunUsageState(saved)).toBe(true);
    expect(loadRunUsage(saved)).toEqual(u);
    const old = saveRunUsage({ calls: 1, unpriced: 0, cost: { total: 1, prompt: 1, completion: 0 } });
    expect(old).toHaveLength(4);
    expect(isRunUsageState(old)).toBe(true);
    expect(runTotals(loadRunUsage(old))).not.toHaveProperty('calls_without_usage');
  });
});
