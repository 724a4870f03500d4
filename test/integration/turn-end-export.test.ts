import { describe, expect, it } from 'vitest';
import { mirroredDaemon } from '../support/otel-harness.js';
import { scriptedSession } from '../support/scripted-session.js';

const ROOT = 'invoke_agent hermes';

/** Poll until `check` holds or the deadline passes; returns whether it held. */
async function within(ms: number, check: () => boolean): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return check();
}

describe('a finished turn is exported when it ends, not at the batch timer', () => {
  it('with the default 5 s batch delay, each turn’s spans reach the exporter as soon as its root span ends', async () => {
    // the default schedule delay, said explicitly (the harness otherwise sets 0)
    const d = await mirroredDaemon({ env: { OTEL_BSP_SCHEDULE_DELAY: '5000' } });
    const script = scriptedSession();
    const exportedRuns = () =>
      d
        .spans()
        .filter((s) => s.name === ROOT)
        .map((s) => s.attributes['aep.run_id']);
    let previous = 0;
    for (const env of script.envelopes) {
      const r = await d.app.inject({ method: 'POST', url: '/hook', payload: env });
      expect(r.statusCode).toBe(200);
      const ended = d.memory.events.filter((e) => e.type === 'run.finished' || e.type === 'run.failed' || e.type === 'run.cancelled').length;
      if (ended > previous) {
        previous = ended;
        // well inside the 5 s timer: the export followed the turn's end
        expect(await within(2_000, () => exportedRuns().length === ended), `turn ${ended} exported at its end`).toBe(true);
      }
    }
    expect(previous).toBe(script.turns.length);
    // the whole trace of each turn went with its root, not only the root
    const byTrace = new Map<string, number>();
    for (const s of d.spans()) byTrace.set(s.spanContext().traceId, (byTrace.get(s.spanContext().traceId) ?? 0) + 1);
    expect([...byTrace.values()].every((n) => n > 1)).toBe(true);
    await d.mirror.shutdown();
  });
});
