// tail's one line per event: what it shows of golden and real-Hermes events,
// nesting, and what it must never show (content above the event's capture
// level, usage counters, terminal control bytes).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { plainStyler } from '../../../src/tail/color.js';
import { clock, depthOf, renderEvent } from '../../../src/tail/render.js';
import { ROOT } from '../../support/paths.js';

type Ev = Record<string, unknown>;
const golden: Ev[] = readFileSync(path.join(ROOT, 'fixtures/aep/golden/golden.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as Ev);
const byId = (suffix: string) => golden.find((e) => String(e['id']).startsWith(suffix))!;
const render = (e: Ev) => renderEvent(e, plainStyler);

function historyLines(): Ev[] {
  const root = path.join(ROOT, 'fixtures/golden-history');
  return (readdirSync(root, { recursive: true }) as string[])
    .filter((n) => n.endsWith('.jsonl') && n.includes(`${path.sep}hermes${path.sep}`))
    .flatMap((n) => readFileSync(path.join(root, n), 'utf8').split('\n'))
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Ev);
}

describe('tail render', () => {
  it('tool.completed: local time, short session, run, indented type, subject, status and duration; no usage counters', () => {
    const e = byId('01JX9YB3P4T9');
    const line = render(e);
    expect(line.startsWith(clock(e['time']))).toBe(true);
    const d = new Date('2026-07-03T10:15:04.221Z');
    expect(clock(e['time'])).toBe(`${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}:04.221`);
    expect(line).toMatch(/ s_8f2c +r_0042 +tool\.completed Bash status=success 1\.24s @claude-code$/);
    // the event carries gen_ai.usage.*_tokens 142/87: counters are not shown
    expect(line).not.toMatch(/142|87|token/);
  });

  it('nesting: session events flush left, run events one step in, tool events two', () => {
    expect(depthOf(byId('01JX9YB0AAAA'))).toBe(0);
    expect(depthOf(byId('01JX9YB1BBBB'))).toBe(1);
    expect(depthOf(byId('01JX9YB2Z1QK'))).toBe(2);
    // the type column starts 2 columns further in for each level
    const col = (e: Ev) => render(e).indexOf(String(e['type']));
    expect(col(byId('01JX9YB1BBBB')) - col(byId('01JX9YB0AAAA'))).toBe(2);
    expect(col(byId('01JX9YB2Z1QK')) - col(byId('01JX9YB1BBBB'))).toBe(2);
  });

  it('free text only at redacted/full: a tool.failed message shows at redacted, a run.failed at metadata shows its codes only', () => {
    const failed = golden.find((e) => e['type'] === 'tool.failed')!;
    expect(failed['capture']).toBe('redacted');
    expect(render(failed)).toContain('message="ENOSPC: no space left on device');
    expect(render(failed)).toContain('error=io_error');
    const runFailed = golden.find((e) => e['type'] === 'run.failed')!;
    expect(render(runFailed)).toContain('reason=tool_error');
    // the same free text planted in a metadata event is not shown: the event's level does not admit it
    const planted = { ...failed, capture: 'metadata', data: { tool: { name: 'Write' }, error: { type: 'io_error', message: 'PLANTED-TEXT' } } };
    expect(render(planted)).not.toContain('PLANTED-TEXT');
    expect(render(planted)).toContain('error=io_error');
    const prompt = { ...byId('01JX9YB1BBBB'), data: { trigger: 'user', prompt: 'PLANTED-PROMPT' } };
    expect(render(prompt)).not.toContain('PLANTED');
    expect(render({ ...prompt, capture: 'full' })).toContain('prompt="PLANTED-PROMPT"');
  });

  it('attention: kind, options and the prompt the redacted event carries; an outcome names its request shortly', () => {
    const req = byId('01JX9YB4RQ');
    expect(render(req)).toContain('attention.requested Bash kind=permission options=allow|deny prompt="Permission requested: Bash — rm -rf build/"');
    const outcome = golden.find((e) => e['type'] === 'attention.answered' || e['type'] === 'attention.resolved')!;
    expect(render(outcome)).toContain(`…${String(outcome['subject']).slice(-6)}`);
  });

  it('agent-scoped events show the agent in the session column; a foreign agent is named', () => {
    const hb = golden.find((e) => e['type'] === 'agent.heartbeat')!;
    const line = render(hb);
    expect(line).toMatch(new RegExp(`^\\S+ \\(${String(hb['agent']).slice(0, 6)}`));
    expect(line).toContain(`@${String(hb['agent'])}`);
    expect(render(historyLines()[0]!)).not.toContain('@hermes');
  });

  it('control bytes in any field never reach the terminal', () => {
    const evil = { ...byId('01JX9YB3P4T9'), subject: 'a\u001b[31mred\u0007', data: { tool: { name: 'x\u001b]0;t\u0007' }, status: 'ok\nnext' } };
    const line = render(evil);
    // eslint-disable-next-line no-control-regex
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(line).toContain('\\u001b[31mred');
    expect(line).toContain('status=ok\\nnext');
  });

  it('every real Hermes history event renders to one line with its type, and never prints a digest', () => {
    const events = historyLines();
    expect(events.length).toBeGreaterThan(100);
    for (const e of events) {
      const line = render(e);
      expect(line).not.toContain('\n');
      expect(line).toContain(String(e['type']));
      const d = (e['data'] ?? {}) as Ev;
      for (const k of ['message_digest', 'args_digest', 'result_digest']) if (typeof d[k] === 'string') expect(line).not.toContain(d[k]);
    }
  });

  it('real approval session: the facts a reader needs are there', () => {
    const events = historyLines().filter((e) => String(e['session']).endsWith('bef167'));
    const lines = events.map(render);
    expect(lines.find((l) => l.includes('tool.completed'))).toMatch(/tool\.completed terminal 6\.14s$/);
    expect(lines.find((l) => l.includes('attention.answered'))).toMatch(/option=once via=oob$/);
    expect(lines.find((l) => l.includes('session.ended'))).toMatch(/ bef167 +session\.ended reason=normal$/);
  });

  it('a session the daemon ended for idleness says so (hermesendedby: idle), one Hermes ended does not', () => {
    const ended = historyLines().find((e) => e['type'] === 'session.ended')!;
    expect(render({ ...ended, data: { reason: 'timeout' }, hermesendedby: 'idle' })).toMatch(/session\.ended reason=timeout ended_by=idle$/);
    expect(render({ ...ended, data: { reason: 'normal' } })).not.toContain('ended_by');
  });
});
