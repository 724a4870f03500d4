import { afterEach, describe, expect, it } from 'vitest';
import { ulid } from 'ulid';
import { wireOf, type WireEvent } from '../../../src/aep/wire.js';
import type { ControlSettings } from '../../../src/control/control-types.js';
import { COMMAND_BURST, COMMAND_RATE_PER_S, GLOBAL_COMMAND_BURST } from '../../../src/control/command-budget.js';
import { inProcessDaemon } from '../../support/in-process-daemon.js';
import type { AepEvent } from '../../../src/aep/event.js';
import type { DurableLog, WriteOutcome } from '../../../src/bus/durable-log.js';

/** A durable log whose writes settle when the test says (as the history's group commit settles a batch later). */
class DeferredSink implements DurableLog {
  readonly name = 'deferred';
  readonly pending: (() => void)[] = [];
  write(events: readonly AepEvent[]): Promise<WriteOutcome> {
    return new Promise((settle) => this.pending.push(() => settle({ written: events.length, retained: 0, lost: 0 })));
  }
  settleAll(): void {
    for (const s of this.pending.splice(0)) s();
  }
  async flush() {}
  async shutdown() {}
  stats() {
    return { pending: this.pending.length };
  }
}

const INSTRUCT: ControlSettings = { gate: false, gateTools: /^$/, holdMs: 55_000, instruct: true };

/** one control command for an own session, as the socket endpoint or the relay link hands it to the target */
function command(session: string, id = ulid()): WireEvent {
  const ev = Object.freeze({
    aep: '0.1',
    id,
    type: 'x.hermes.control.instruct',
    time: '2026-12-01T10:00:00.000Z',
    source: `aep://operator-host/agent/test-operator/session/${session}`,
    agent: 'test-operator',
    session,
    severity: 'notice',
    capture: 'full',
    data: { text: 'look at the tests first' },
  });
  return wireOf(ev, JSON.stringify(ev), 'ingest');
}

type Daemon = ReturnType<typeof inProcessDaemon>;
const daemons: Daemon[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.app.close();
});

/** the daemon with steering on, a clock the test moves, and what the target publishes to the stream only */
function daemon() {
  let now = Date.parse('2026-12-01T10:00:00.000Z');
  const streamOnly: WireEvent[] = [];
  const d = inProcessDaemon({ control: INSTRUCT, controlClock: () => now, republish: (w) => streamOnly.push(w) });
  daemons.push(d);
  const target = d.control!;
  const lines = (session?: string) => d.memory.events.filter((e) => session === undefined || e.session === session).length;
  const settle = () => new Promise((r) => setImmediate(r));
  return { d, target, streamOnly, lines, settle, advance: (ms: number) => (now += ms) };
}

const busyOf = (target: NonNullable<Daemon['control']>) => (target.stats() as { commands_busy: number }).commands_busy;

describe('a command flood is bounded: past the budget a command is nacked busy, stream-only, and counted', () => {
  it('10,000 commands on one session write at most the burst to its history; every refused one is nacked busy and counted', async () => {
    const { target, streamOnly, lines, settle } = daemon();
    const flood = Array.from({ length: 10_000 }, () => command('s-flood'));
    for (const c of flood) target.command(c);
    await settle();
    // each command let through writes itself and its ack: the history grew by two lines per accepted or refused decision
    expect(lines('s-flood')).toBe(2 * COMMAND_BURST);
    expect(busyOf(target)).toBe(10_000 - COMMAND_BURST);
    // each refused command still has its one ack, on the stream: control.rejected busy, cause = the command
    const nacks = streamOnly.filter((w) => w.type === 'control.rejected');
    expect(nacks).toHaveLength(10_000 - COMMAND_BURST);
    expect(nacks.map((w) => w.event['cause'])).toEqual(flood.slice(COMMAND_BURST).map((c) => c.id));
    expect(nacks.every((w) => (w.event['data'] as { reason?: string }).reason === 'busy')).toBe(true);
    // a redelivery of a refused command re-emits its recorded nack byte for byte, and writes nothing
    const before = streamOnly.length;
    target.command(flood.at(-1)!);
    await settle();
    expect(streamOnly.length).toBe(before + 1);
    expect(streamOnly.at(-1)!.line).toBe(nacks.at(-1)!.line);
    expect(lines('s-flood')).toBe(2 * COMMAND_BURST);
    // /healthz shows the refusals
    const health = (await daemons[0]!.app.inject({ method: 'GET', url: '/healthz' })).json<{ control_target?: { commands_busy?: number } }>();
    expect(health.control_target?.commands_busy).toBe(10_000 - COMMAND_BURST);
  });

  it('the budget refills with time: a second later the session may send its rate again', async () => {
    const { target, lines, settle, advance } = daemon();
    for (let i = 0; i < COMMAND_BURST + 5; i++) target.command(command('s-refill'));
    advance(1_000);
    for (let i = 0; i < COMMAND_BURST; i++) target.command(command('s-refill'));
    await settle();
    expect(lines('s-refill')).toBe(2 * (COMMAND_BURST + COMMAND_RATE_PER_S));
    expect(busyOf(target)).toBe(5 + COMMAND_BURST - COMMAND_RATE_PER_S);
  });

  it('a flood spread over many sessions is bounded by the global budget', async () => {
    const { target, lines, settle } = daemon();
    const sessions = Math.ceil((2 * GLOBAL_COMMAND_BURST) / 5);
    for (let s = 0; s < sessions; s++) for (let i = 0; i < 5; i++) target.command(command(`s-many-${s}`));
    await settle();
    expect(lines()).toBe(2 * GLOBAL_COMMAND_BURST);
    expect(busyOf(target)).toBe(sessions * 5 - GLOBAL_COMMAND_BURST);
  });

  it("a busy nack reaches the stream after the events stamped before it: the session's seqs never go back there", async () => {
    const sink = new DeferredSink();
    const stream: WireEvent[] = [];
    const d = inProcessDaemon({
      control: INSTRUCT,
      controlClock: () => 0,
      durable: [sink],
      // a stand-in for the stream hub: an after-durable consumer
      consumers: [
        {
          name: 'stream',
          consume: (events) => stream.push(...events.map((e) => wireOf(e as unknown as Record<string, unknown>, JSON.stringify(e), 'own'))),
          flush: async () => undefined,
          shutdown: async () => undefined,
        },
      ],
      republish: (w) => stream.push(w),
    });
    daemons.push(d);
    for (let i = 0; i <= COMMAND_BURST; i++) d.control!.command(command('s-order'));
    await new Promise((r) => setImmediate(r));
    // the accepted commands' events wait on their write: the nack, stamped after them, waits too
    expect(sink.pending.length).toBe(COMMAND_BURST);
    expect(stream).toEqual([]);
    sink.settleAll();
    await new Promise((r) => setImmediate(r));
    const seqs = stream.filter((w) => w.seq !== undefined).map((w) => w.seq!);
    expect(seqs).toHaveLength(COMMAND_BURST + 1);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(stream.at(-1)).toMatchObject({ type: 'control.rejected' });
  });
});
