import { describe, expect, it } from 'vitest';
import { buildServer } from '../../../src/daemon/server.js';
import { createDiagnostics, pinoOf, REDACTED, silentLogger } from '../../../src/core/logger.js';
import type { HookPipeline } from '../../../src/daemon/pipeline.js';

/** diagnostics written to memory: the parsed lines */
function capture(debug = false) {
  const lines: Record<string, unknown>[] = [];
  const log = createDiagnostics(debug, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  return { log, lines };
}

describe('diagnostics (pino)', () => {
  it('one JSON line per message: level by name, ISO time, msg, the fields; nothing else', () => {
    const { log, lines } = capture();
    log.error('the event log cannot be written', { sink: 'log', reason: 'write failed: ENOSPC', episodes: 2, ok: false });
    expect(lines).toEqual([
      {
        level: 'error',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        msg: 'the event log cannot be written',
        sink: 'log',
        reason: 'write failed: ENOSPC',
        episodes: 2,
        ok: false,
      },
    ]);
  });

  it('debug lines only with AEP_DEBUG', () => {
    const quiet = capture(false);
    quiet.log.debug('hook mapped', { hook: 'pre_tool_call' });
    quiet.log.info('listening');
    expect(quiet.lines.map((l) => l.msg)).toEqual(['listening']);
    const loud = capture(true);
    loud.log.debug('hook mapped', { hook: 'pre_tool_call' });
    expect(loud.lines).toMatchObject([{ level: 'debug', msg: 'hook mapped', hook: 'pre_tool_call' }]);
    // the pipeline builds its debug fields only when they can be written
    expect([quiet.log.debugEnabled, loud.log.debugEnabled]).toEqual([false, true]);
  });

  it('content-shaped fields are redacted, at the top level and one level down; structural ones pass', () => {
    const { log, lines } = capture();
    const p = pinoOf(log)!;
    log.warn('oops', {
      prompt: 'my secret plan',
      command: 'curl -H x',
      path: '/home/u/notes.txt',
      token: 'abc',
      hook: 'pre_llm_call',
      events: 'run.started#1',
    });
    p.error(
      { req: { headers: { authorization: 'Bearer 0123', host: 'localhost' } }, tool: { args: '{"x":1}', result: 'out', name: 'terminal' } },
      'request failed',
    );
    expect(lines[0]).toMatchObject({ prompt: REDACTED, command: REDACTED, path: REDACTED, token: REDACTED, hook: 'pre_llm_call', events: 'run.started#1' });
    expect(lines[1]).toMatchObject({
      req: { headers: { authorization: REDACTED, host: 'localhost' } },
      tool: { args: REDACTED, result: REDACTED, name: 'terminal' },
    });
    expect(JSON.stringify(lines)).not.toMatch(/secret plan|curl|notes\.txt|0123|"out"/);
  });

  it('fastify logs through the same pino (same redaction, same destination); a logger that is not pino gives fastify none', async () => {
    const { log, lines } = capture();
    const deps = { pipeline: {} as HookPipeline, health: () => ({}), maxBodyBytes: 1024 };
    const app = buildServer({ ...deps, log });
    app.log.warn({ prompt: 'my secret plan', hook: 'stop' }, 'from fastify');
    // no line per request
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', msg: 'from fastify', prompt: REDACTED, hook: 'stop' })]);
    await app.close();
    // a logger that is not pino (tests' own): fastify gets none
    expect(pinoOf(silentLogger)).toBeUndefined();
  });
});
