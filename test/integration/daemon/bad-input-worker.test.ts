// Bad input whose body is over INLINE_PARSE_MAX_BYTES: parsed on the JSON worker thread, which runs the built
// module (dist/src/transport/json-worker.js), so these live in the integration tier (the others: test/unit/daemon/bad-input.test.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { inProcessDaemon } from '../../support/in-process-daemon.js';
import { MARKER, preToolCallBody } from '../../support/scripted-session.js';
import { defaultPolicy } from '../../../src/capture/policy.js';
import { INLINE_PARSE_MAX_BYTES } from '../../../src/transport/json-body.js';

const post = (d: ReturnType<typeof inProcessDaemon>, payload: string, type = 'application/json') =>
  d.app.inject({ method: 'POST', url: '/hook', payload, headers: { 'content-type': type } });

const envelope = (over: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => preToolCallBody('c1', extra, over);

describe('bad input on the worker: a clear refusal or an honest mapping, never a crash, never content in the error', () => {
  const apps: ReturnType<typeof inProcessDaemon>[] = [];
  const daemon = (o: Parameters<typeof inProcessDaemon>[0] = {}) => {
    const d = inProcessDaemon(o);
    apps.push(d);
    return d;
  };
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((d) => d.app.close()));
  });

  it('a 10 MB tool result is digested, not carried, and answered at once', async () => {
    const d = daemon();
    const big = `${MARKER}${'y'.repeat(10 * 1024 * 1024)}`;
    await post(d, envelope());
    const r = await post(d, envelope({ hook_event_name: 'post_tool_call', tool_input: null }, { result: big, status: 'ok', duration_ms: 5 }));
    expect(r.statusCode).toBe(200);
    expect(r.body).toBe('{}');
    const done = d.memory.events.at(-1)!;
    expect(done.type).toBe('tool.completed');
    expect(done.data.result_digest).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.stringify(done).length).toBeLessThan(2000);
  });

  it('__proto__ / constructor keys are stripped by the body parser, inline and on the worker alike: the hook is mapped, no prototype changes', async () => {
    const protoBefore = Object.getOwnPropertyNames(Object.prototype).sort();
    // capture full: the tool's args are carried as parsed, so what the parser left is visible
    const d = daemon({ policy: { ...defaultPolicy({ home: '/home/dev' }), ceiling: 'full' } });
    const poison = '"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":2}},"\\u005f_proto__":{"polluted":3}';
    // a small body is parsed inline; one over INLINE_PARSE_MAX_BYTES on the worker thread, and handed back in parts
    for (const pad of [0, INLINE_PARSE_MAX_BYTES + 1024]) {
      const body =
        `{"hook_event_name":"pre_tool_call","tool_name":"x","session_id":"s${pad}",` +
        `"tool_input":{${poison},"keep":1,"nested":{${poison},"ok":true}},` +
        `"extra":{${poison},"tool_call_id":"c${pad}","pad":"${'p'.repeat(pad)}"}}`;
      const r = await post(d, body);
      expect(r.statusCode).toBe(200);
      const ev = d.memory.events.at(-1)!;
      expect(ev).toMatchObject({ type: 'tool.requested', session: `s${pad}`, data: { tool: { call_id: `c${pad}` } } });
      const args = (ev.data as { args: Record<string, unknown> }).args;
      expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
      expect(Object.keys(args)).toEqual(['keep', 'nested']);
      const nested = args.nested as Record<string, unknown>;
      expect(Object.getPrototypeOf(nested)).toBe(Object.prototype);
      expect(Object.keys(nested)).toEqual(['ok']);
      expect(JSON.stringify(ev)).not.toContain('polluted');
    }
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(protoBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
