// The page's model (ui/state.js), fed the daemon's own history lines (fixtures/golden-history, the AEP golden
// file) and a gate card's life: sessions live first with their totals, the turn's tree as it grows, cards that
// wait and resolve, finished turns with their trace ids, and nothing applied twice.
import { describe, expect, it } from 'vitest';
import { historyLines, uiModule } from './ui-modules.js';

const S = await uiModule('state.js');

const G = 'golden-history/0.19.0';
const MODEL_CALLS = historyLines(`${G}/oneshot-model-calls/hermes/20261201_234056_a86ac5.jsonl`);
const PARENT = historyLines(`${G}/tty-subagent/hermes/20261201_015336_e51c5d.jsonl`);
const CHILD = historyLines(`${G}/tty-subagent/hermes/20261201_015348_06a357.jsonl`);
const APPROVAL = historyLines(`${G}/tty-approval-once/hermes/20261201_015107_962745.jsonl`);
const CLARIFY_TIMEOUT = historyLines(`${G}/tty-clarify-timeout/hermes/20261201_015314_788331.jsonl`);
const AEP_GOLDEN = historyLines('aep/golden/golden.jsonl');

function feed(events: any[], model = S.createModel()): any {
  for (const ev of events) S.apply(model, ev);
  return model;
}

/** The tree as [kind, name, state, children] for a compact comparison. */
const shape = (u: any): any[] => [u.kind, u.name, u.state, u.children.map(shape)];

describe('sessions', () => {
  it('live ones first (a session is live until session.ended), then the latest active, with agent, model, platform, first-event time', () => {
    // the fixtures' fixed clock: the child's last event (19:00:08) is later than the model-calls session's (19:00:03)
    const m = feed([...MODEL_CALLS.slice(0, 3), ...PARENT, ...CHILD]);
    const list = S.sessionList(m);
    expect(list.map((s: any) => [s.id, s.ended])).toEqual([
      ['20261201_015348_06a357', false],
      ['20261201_234056_a86ac5', false],
      ['20261201_015336_e51c5d', true],
    ]);
    const s = m.sessions.get('20261201_234056_a86ac5');
    expect([s.agent, s.model, s.platform, s.firstAt]).toEqual(['hermes', 'fake-model', 'cli', Date.parse('2026-11-29T19:00:01.000Z')]);
    expect(m.sessions.get('20261201_015348_06a357').platform).toBe('subagent');
    expect(S.defaultSelection(m, undefined)).toBe('20261201_015348_06a357');
    expect(S.defaultSelection(m, '20261201_015336_e51c5d')).toBe('20261201_015336_e51c5d');
    expect(S.defaultSelection(m, 'gone')).toBe('20261201_015348_06a357');
  });

  it('tokens add up over the model calls as they come, and the run total replaces them at its end', () => {
    const m = feed(MODEL_CALLS.slice(0, 3));
    const s = m.sessions.get('20261201_234056_a86ac5');
    expect(S.sessionTotals(s)).toMatchObject({ tokensIn: 1200, tokensOut: 40, unpriced: 1 });
    feed(MODEL_CALLS.slice(3, 6), m);
    expect(S.sessionTotals(s)).toMatchObject({ tokensIn: 2550, tokensOut: 70, unpriced: 2 });
    feed(MODEL_CALLS.slice(6), m);
    expect(S.sessionTotals(s)).toMatchObject({ tokensIn: 2550, tokensOut: 70 });
  });

  it('cost: the priced calls summed while the turn runs, the run.finished cost once it ends', () => {
    const priced = MODEL_CALLS.map((ev) =>
      ev.type === 'x.hermes.model.call'
        ? { ...ev, data: { ...ev.data, cost: { currency: 'USD', total: ev.data.api_call === 1 ? 0.0012 : 0.0021 } } }
        : ev.type === 'run.finished'
          ? { ...ev, data: { ...ev.data, cost: { currency: 'USD', total: 0.0033 } } }
          : ev,
    );
    const m = feed(priced.slice(0, 6));
    const s = m.sessions.get('20261201_234056_a86ac5');
    expect(S.sessionTotals(s).cost).toBeCloseTo(0.0033, 9);
    expect(S.sessionTotals(s).unpriced).toBe(0);
    feed(priced.slice(6), m);
    expect(S.sessionTotals(s).cost).toBe(0.0033);
    // the AEP golden run that carries its own totals and cost
    const g = feed(AEP_GOLDEN);
    expect(S.sessionTotals(g.sessions.get('s_cost'))).toMatchObject({ tokensIn: 9214, tokensOut: 3480, cost: 0.04827 });
  });
});

describe('the turn in flight', () => {
  it('grows as events arrive: model calls with tokens and durations, a tool running until it ends', () => {
    const m = feed(MODEL_CALLS.slice(0, 4));
    const s = m.sessions.get('20261201_234056_a86ac5');
    let run = S.currentRun(s);
    expect(run.state).toBe('running');
    expect(shape(run)).toEqual([
      'run',
      run.id,
      'running',
      [
        ['model', 'fake-model', 'done', []],
        ['tool', 'terminal', 'running', []],
      ],
    ]);
    expect(run.children[0]).toMatchObject({ tokensIn: 1200, tokensOut: 40, durationMs: 1906, call: 1 });
    feed(MODEL_CALLS.slice(4), m);
    run = S.currentRun(s);
    expect(shape(run)).toEqual([
      'run',
      run.id,
      'done',
      [
        ['model', 'fake-model', 'done', []],
        ['tool', 'terminal', 'done', []],
        ['model', 'fake-model', 'done', []],
      ],
    ]);
    expect(run.children.map((u: any) => u.durationMs)).toEqual([1906, 184, 981]);
  });

  it('a subagent runs until delegation.subagent.stopped; its child session is its own line', () => {
    const m = feed(PARENT.slice(0, 4));
    const run = S.currentRun(m.sessions.get('20261201_015336_e51c5d'));
    expect(run.children.map((u: any) => [u.kind, u.state])).toEqual([
      ['tool', 'running'],
      ['subagent', 'running'],
    ]);
    expect(run.children[1].child).toBe('20261201_015348_06a357');
    feed(PARENT.slice(4, 6), m);
    expect(run.children.map((u: any) => [u.kind, u.state, u.durationMs])).toEqual([
      ['tool', 'done', 921],
      ['subagent', 'done', 910],
    ]);
  });

  it("Hermes's approval hangs under its tool call with its options, observed only, its wait measured", () => {
    const m = feed(APPROVAL.slice(0, 5));
    const run = S.currentRun(m.sessions.get('20261201_015107_962745'));
    const card = run.children[0].children[0];
    expect(card).toMatchObject({ kind: 'attention', name: 'permission', state: 'running', answerable: false });
    expect(card.options.map((o: any) => o.id)).toEqual(['once', 'session', 'always', 'deny']);
    const now = Date.parse('2026-11-29T19:00:05.500Z');
    expect(S.pendingCards(m, now).map((c: any) => c.id)).toEqual([card.id]);
    feed(APPROVAL.slice(5), m);
    expect(card).toMatchObject({ state: 'done', outcome: 'answered: once', durationMs: 1000 });
    expect(S.pendingCards(m, now)).toEqual([]);
  });

  it('a clarify that timed out, a denied and a failed tool, a failed run', () => {
    const c = feed(CLARIFY_TIMEOUT);
    const card = c.cards.values().next().value;
    expect(card).toMatchObject({ name: 'form', state: 'failed', outcome: 'timed out', fields: 1 });
    const g = feed(AEP_GOLDEN);
    const runs = [...g.sessions.get('s_8f2c').runs.values()];
    expect(runs.map((r: any) => r.state)).toEqual(['done', 'failed', 'failed']);
    expect(runs[1].children.map((u: any) => [u.name, u.state])).toEqual([
      ['Bash', 'denied'],
      ['Write', 'failed'],
    ]);
  });
});

describe('gate cards', () => {
  const SID = '20261201_234056_a86ac5';
  const base = MODEL_CALLS[3];
  const CARD_ID = '01J000000000000000000GATE1';
  const gateCard = {
    ...base,
    id: CARD_ID,
    type: 'attention.requested',
    seq: 100,
    cause: base.id,
    subject: 'terminal',
    time: '2026-11-29T19:00:04.100Z',
    data: {
      kind: 'permission',
      prompt: 'hermes requests permission: terminal',
      options: [
        { id: 'allow', label: 'allow' },
        { id: 'deny', label: 'deny' },
      ],
      expires_at: '2026-11-29T19:05:04.100Z',
      respond_via: ['control'],
    },
  };
  const outcome = (type: string, n: number, data: any) => ({
    ...base,
    id: `01J000000000000000000GATE${n}`,
    type,
    seq: 100 + n,
    cause: CARD_ID,
    subject: CARD_ID,
    data,
  });
  const answered = outcome('attention.answered', 2, { answer: { option: 'deny', text: 'not now' }, via: 'control' });
  const resolved = outcome('attention.resolved', 3, { resolution: 'answered', latency_ms: 2000 });

  it('appears answerable with its expiry, then resolves (answered deny: denied) and leaves the waiting list', () => {
    const m = feed([...MODEL_CALLS.slice(0, 4), gateCard]);
    const at = Date.parse('2026-11-29T19:00:05Z');
    const [card] = S.pendingCards(m, at);
    expect(card).toMatchObject({ id: CARD_ID, session: SID, answerable: true, expiresAt: Date.parse('2026-11-29T19:05:04.100Z'), state: 'running' });
    expect(S.currentRun(m.sessions.get(SID)).children[1].children[0]).toBe(card);
    feed([answered], m);
    expect(card.state).toBe('denied');
    expect(S.pendingCards(m, at)).toEqual([]);
    feed([resolved], m);
    expect(card).toMatchObject({ state: 'denied', outcome: 'answered: deny' });
  });

  it('an expired card with no outcome stays a minute, then is dropped; the end of its turn drops it at once', () => {
    const m = feed([...MODEL_CALLS.slice(0, 4), gateCard]);
    const expires = Date.parse('2026-11-29T19:05:04.100Z');
    expect(S.pendingCards(m, expires + 59_000)).toHaveLength(1);
    expect(S.pendingCards(m, expires + 61_000)).toHaveLength(0);
    feed(MODEL_CALLS.slice(4), m);
    expect(S.pendingCards(m, expires - 1000)).toHaveLength(0);
  });
});

describe('finished turns and dedupe', () => {
  it('ended runs newest first, each with its outcome, duration and the trace id of its run.started traceparent', () => {
    const m = feed(PARENT);
    const turns = S.finishedTurns(m.sessions.get('20261201_015336_e51c5d'));
    expect(turns.map((r: any) => [r.outcome, r.durationMs, r.traceId])).toEqual([
      ['finished', 1000, '424daa5d947f775de68f2a8a14e3ca68'],
      ['finished', 8000, '9042050e8ac4cd218d580e698090de2d'],
    ]);
    expect(S.traceIdOf('00-00000000000000000000000000000000-0000000000000000-00')).toBeUndefined();
    expect(S.traceIdOf('garbage')).toBeUndefined();
  });

  it('an event seen again (a reconnect replays from=all) changes nothing; the same id from another source is another event', () => {
    const all = [...PARENT, ...CHILD, ...MODEL_CALLS, ...APPROVAL];
    const m = feed(all);
    const version = m.version;
    const before = JSON.stringify(S.sessionList(m).map((s: any) => [s.id, S.sessionTotals(s), [...s.runs.values()].map(shape)]));
    expect(all.map((ev) => S.apply(m, ev))).toEqual(all.map(() => false));
    expect(m.version).toBe(version);
    expect(JSON.stringify(S.sessionList(m).map((s: any) => [s.id, S.sessionTotals(s), [...s.runs.values()].map(shape)]))).toBe(before);
    // the golden histories number their events from 1 in every session: the key is source + id, as AEP dedupes
    expect(S.apply(m, { ...MODEL_CALLS[2], source: 'aep://elsewhere/agent/hermes/session/x' })).toBe(true);
  });
});
