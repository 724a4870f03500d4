import { afterEach, describe, expect, it } from 'vitest';
import { MAX_HELD } from '../../../src/control/control-target.js';
import { HOLD_HEADER } from '../../../src/control/hook-step.js';
import type { ControlSettings } from '../../../src/control/control-types.js';
import { inProcessDaemon } from '../../support/in-process-daemon.js';
import { preToolCallBody } from '../../support/scripted-session.js';
import { waitFor } from '../../support/processes.js';
import type { AepEvent } from '../../../src/aep/event.js';
import type { DurableLog, WriteOutcome } from '../../../src/bus/durable-log.js';

const GATE: ControlSettings = { gate: true, gateTools: /^.*$/, holdMs: 55_000, instruct: false };
/** what the shim declares with its AEP_HERMES_CONTROL on: it waits this long for a held reply */
const HELD = { 'content-type': 'application/json', [HOLD_HEADER]: '58000' };

/** A durable log whose writes settle when the test says (as the history's group commit settles a batch later). */
class DeferredSink implements DurableLog {
  readonly name = 'deferred';
  readonly pending: ((o: WriteOutcome | undefined) => void)[] = [];
  write(events: readonly AepEvent[]): Promise<WriteOutcome> {
    return new Promise((settle) => this.pending.push((o) => settle(o ?? { written: events.length, retained: 0, lost: 0 })));
  }
  /** every pending write settles: written, unless `outcome` says otherwise */
  settleAll(outcome?: WriteOutcome): void {
    for (const s of this.pending.splice(0)) s(outcome);
  }
  async flush() {}
  async shutdown() {}
  stats() {
    return { pending: this.pending.length };
  }
}

type Daemon = ReturnType<typeof inProcessDaemon>;
const daemons: Daemon[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) {
    d.control?.releaseAll();
    await d.app.close();
  }
});
const gated = (durable: DurableLog[] = [], maxHeld?: number): Daemon & { control: NonNullable<Daemon['control']> } => {
  const d = inProcessDaemon({ control: GATE, durable, ...(maxHeld !== undefined ? { maxHeld } : {}) });
  daemons.push(d);
  if (!d.control) throw new Error('the control target was not built');
  return d as Daemon & { control: NonNullable<Daemon['control']> };
};

/** `n` gated pre_tool_calls sent at once; `replied` counts the ones answered so far (an unheld call is answered at once) */
function flood(d: Daemon, n: number, prefix: string) {
  let replied = 0;
  const replies = Array.from({ length: n }, (_, i) =>
    d.app.inject({ method: 'POST', url: '/hook', payload: preToolCallBody(`${prefix}${i}`), headers: HELD }).then((r) => {
      replied++;
      return r;
    }),
  );
  return { replies, replied: () => replied };
}

const stats = (d: Daemon & { control: NonNullable<Daemon['control']> }) =>
  d.control.stats() as { pending_cards: number; reserved_holds: number; not_held_full: number; held: number; dismissed: number };

describe('the hold cap (MAX_HELD gate cards at once), under concurrent held hooks', () => {
  it('never holds more than the cap, and counts every call let through unheld in not_held_full', async () => {
    const d = gated();
    const n = MAX_HELD + 300;
    const f = flood(d, n, 'cap');
    // every call is either held (its card pending) or answered at once (let through): wait until all are one or the other
    await waitFor('every call held or let through', () => (f.replied() + stats(d).pending_cards === n ? true : undefined), 60_000);
    const s = stats(d);
    expect(s.pending_cards).toBeLessThanOrEqual(MAX_HELD);
    expect(s.pending_cards).toBe(MAX_HELD);
    expect(s.not_held_full).toBe(f.replied());
    expect(s.not_held_full).toBe(n - MAX_HELD);
    expect(s.held).toBe(MAX_HELD);
    // /healthz shows the same counter where the operator looks
    const health = (await d.app.inject({ method: 'GET', url: '/healthz' })).json<{ control_target?: { not_held_full?: number; pending_cards?: number } }>();
    expect(health.control_target).toMatchObject({ not_held_full: n - MAX_HELD, pending_cards: MAX_HELD });
    // the cards resolve (here: dismissed at shutdown): their slots are free again, every held call answered {}
    d.control.releaseAll();
    const all = await Promise.all(f.replies);
    expect(all.every((r) => r.statusCode === 200 && r.body === '{}')).toBe(true);
    expect(stats(d).pending_cards).toBe(0);
    // a second flood is held up to the cap again: no slot leaked
    const g = flood(d, MAX_HELD + 10, 'again');
    await waitFor('the second flood held or let through', () => (g.replied() + stats(d).pending_cards === MAX_HELD + 10 ? true : undefined), 60_000);
    expect(stats(d).pending_cards).toBe(MAX_HELD);
    expect(stats(d).not_held_full).toBe(n - MAX_HELD + 10);
    d.control.releaseAll();
    await Promise.all(g.replies);
  });

  it('with the history write of every call still pending (group commit), the concurrent calls do not all pass the check', async () => {
    const sink = new DeferredSink();
    const d = gated([sink]);
    const n = MAX_HELD + 200;
    const f = flood(d, n, 'burst');
    // every call has been mapped (its card raised or not) and waits for its write: the check was made for all of them
    await waitFor('every call waiting on its write', () => (sink.pending.length === n ? true : undefined), 60_000);
    sink.settleAll();
    await waitFor('every call held or let through', () => (f.replied() + stats(d).pending_cards === n ? true : undefined), 60_000);
    const s = stats(d);
    expect(s.pending_cards).toBeLessThanOrEqual(MAX_HELD);
    expect(s.not_held_full).toBe(f.replied());
    expect(s.not_held_full).toBe(n - MAX_HELD);
    d.control.releaseAll();
    await waitFor('the dismissals written', () => (sink.pending.length > 0 ? (sink.settleAll(), true) : undefined), 60_000);
    expect((await Promise.all(f.replies)).every((r) => r.statusCode === 200)).toBe(true);
  });

  it('a hold not made (its card not written) gives its slot back: the next calls are held up to the cap', async () => {
    const sink = new DeferredSink();
    const cap = 3;
    const d = gated([sink], cap);
    const lostWrites = flood(d, cap, 'lost');
    await waitFor('the calls waiting on their write', () => (sink.pending.length === cap ? true : undefined), 60_000);
    expect(stats(d).reserved_holds).toBe(cap);
    // the history loses their events: no card is held, each is closed at once and answered 503 (never a hold):
    // the transport answers Hermes {} (the call proceeds) and spools the hook for a later, exactly-once record
    sink.settleAll({ written: 0, retained: 0, lost: 1, reason: 'write failed: EIO' });
    const replies = await Promise.all(lostWrites.replies);
    expect(replies.map((r) => r.statusCode)).toEqual([503, 503, 503]);
    expect(replies.some((r) => r.body.includes('block'))).toBe(false);
    expect(stats(d)).toMatchObject({ pending_cards: 0, reserved_holds: 0, not_held_full: 0, dismissed: cap });
    const next = flood(d, cap + 1, 'next');
    await waitFor(
      'the next calls held or let through',
      () => {
        sink.settleAll();
        return next.replied() + stats(d).pending_cards === cap + 1 ? true : undefined;
      },
      60_000,
    );
    expect(stats(d)).toMatchObject({ pending_cards: cap, reserved_holds: 0, not_held_full: 1 });
    d.control.releaseAll();
    sink.settleAll();
    await Promise.all(next.replies);
  });
});
