import { afterEach, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { inProcessDaemon } from '../../support/in-process-daemon.js';
import { JsonlHistorySink } from '../../../src/history/jsonl-history-sink.js';
import { tempDir } from '../../support/processes.js';
import { MARKER, preToolCallBody, SENTINEL } from '../../support/scripted-session.js';
import type { LogFields } from '../../../src/core/logger.js';
import { str } from '../../../src/hermes/envelope.js';

const post = (d: ReturnType<typeof inProcessDaemon>, payload: string, type = 'application/json') =>
  d.app.inject({ method: 'POST', url: '/hook', payload, headers: { 'content-type': type } });

const envelope = (over: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => preToolCallBody('c1', extra, over);

describe('bad input: a clear refusal or an honest mapping, never a crash, never content in the error', () => {
  const apps: ReturnType<typeof inProcessDaemon>[] = [];
  const daemon = (o: Parameters<typeof inProcessDaemon>[0] = {}) => {
    const d = inProcessDaemon(o);
    apps.push(d);
    return d;
  };
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((d) => d.app.close()));
  });

  it('non-JSON body → 400 with a fixed reason that does not quote the body', async () => {
    const d = daemon();
    const r = await post(d, `{"hook_event_name": ${MARKER}`);
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ detail: 'body is not valid JSON' });
    expect(r.body).not.toContain(MARKER);
    expect(d.memory.events).toHaveLength(0);
  });

  it('wrong shape → 400 naming the path and rule, not the value', async () => {
    const d = daemon();
    const r = await post(d, JSON.stringify({ hook_event_name: 42, extra: MARKER }));
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toBe('invalid-envelope');
    expect(r.json().detail).toContain('hook_event_name');
    expect(r.body).not.toContain(MARKER);
  });

  it('a JSON array, a string, null → 400', async () => {
    const d = daemon();
    for (const body of ['[]', '"x"', 'null']) expect((await post(d, body)).statusCode).toBe(400);
  });

  it("wrong content type → 415, named in the project's own words (no framework internals in a reply)", async () => {
    const d = daemon();
    const r = await post(d, envelope(), 'text/plain');
    expect(r.statusCode).toBe(415);
    expect(r.json()).toEqual({ error: 'unsupported-media-type', detail: 'content-type must be application/json' });
    for (const bad of ['{', '']) expect(JSON.stringify((await post(d, bad)).json())).not.toMatch(/FST_/);
  });

  it('a body over the limit → 413, and the daemon keeps serving', async () => {
    const d = daemon({ maxBodyBytes: 4096 });
    const r = await post(d, envelope({ tool_input: { blob: 'x'.repeat(10_000) } }));
    expect(r.statusCode).toBe(413);
    expect(r.json().error).toBe('too-large');
    expect((await post(d, envelope())).statusCode).toBe(200);
  });

  it('an unknown hook maps to x.hermes.<name> with no payload', async () => {
    const d = daemon();
    const r = await post(
      d,
      JSON.stringify({ hook_event_name: 'kanban_task_claimed', session_id: 's1', extra: { telemetry_schema_version: SENTINEL, secret: MARKER } }),
    );
    expect(r.statusCode).toBe(200);
    expect(d.memory.events.map((e) => [e.type, e.data])).toEqual([['x.hermes.kanban.task.claimed', {}]]);
    const odd = await post(d, JSON.stringify({ hook_event_name: '../../Weird Hook!', session_id: 's1' }));
    expect(odd.statusCode).toBe(200);
    expect(d.memory.events.at(-1)?.type).toBe('x.hermes.weird.hook');
  });

  it('a missing turn_id maps honestly onto the open run, or onto none', async () => {
    const d = daemon();
    await post(d, envelope({ hook_event_name: 'pre_tool_call' }, { turn_id: undefined }));
    expect(d.memory.events.at(-1)).not.toHaveProperty('run');
    await post(d, JSON.stringify({ hook_event_name: 'pre_llm_call', session_id: 's1', extra: { turn_id: 's1:t:9', user_message: 'hi' } }));
    await post(d, envelope({}, { turn_id: undefined, tool_call_id: 'c2' }));
    expect(d.memory.events.at(-1)).toMatchObject({ type: 'tool.requested', run: 's1:t:9' });
  });

  it('session ids with /, .., control characters stay inside the log dir, each in its own file', async () => {
    const root = tempDir();
    const sink = new JsonlHistorySink(root, 100);
    const d = daemon({ durable: [sink] });
    const ids = ['../../etc/passwd', '..', '.', 'a/b', 'ctl\u0000\u001b[31m\n', 'ünï', 'x'.repeat(3000)];
    for (const id of ids) expect((await post(d, envelope({ session_id: id }))).statusCode).toBe(200);
    await sink.shutdown();
    const files = readdirSync(path.join(root, 'hermes'));
    expect(files).toHaveLength(ids.length);
    for (const f of files) {
      expect(f).toMatch(/^[A-Za-z0-9_%~-]+\.jsonl$/);
      // every event of the file is of one session (its turn_id names another session, s1, so the hook also opens
      // its session as a rotation from s1: two lines, both this session's)
      const events = readFileSync(path.join(root, 'hermes', f), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { session: string });
      expect(new Set(events.map((e) => e.session)).size).toBe(1);
      // over 256 characters an id keeps a prefix plus a hash of the whole (bounded, still distinct)
      expect(ids.map((i) => str(i))).toContain(events[0]!.session);
    }
    expect(readdirSync(root)).toEqual(['hermes']);
  });

  it('a missing or different drift sentinel is mapped, counted, and logged once', async () => {
    const lines: LogFields[] = [];
    const log = { info() {}, debug() {}, error() {}, warn: (msg: string, f: LogFields = {}) => void lines.push({ msg, ...f }) };
    const d = daemon({ log });
    await post(d, envelope({}, { telemetry_schema_version: undefined }));
    await post(d, envelope({}, { telemetry_schema_version: undefined, tool_call_id: 'c9' }));
    await post(d, envelope({}, { telemetry_schema_version: 'hermes.observer.v2', tool_call_id: 'c8' }));
    expect(d.memory.events.filter((e) => e.type === 'tool.requested')).toHaveLength(3);
    const h = (await d.app.inject({ method: 'GET', url: '/healthz' })).json();
    expect(h.drift).toMatchObject({ missing: 2, mismatched: 1 });
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ got: 'hermes.observer.v2' });
  });

  it('a drift sentinel that is not shaped like one is logged as its length only, never quoted (it may be a secret)', async () => {
    const lines: LogFields[] = [];
    const log = { info() {}, debug() {}, error() {}, warn: (msg: string, f: LogFields = {}) => void lines.push({ msg, ...f }) };
    const d = daemon({ log });
    const github = `ghp_${'A1b2C3d4E5'.repeat(3)}123456`;
    for (const [i, v] of [github, 'Hunter2Secret99', 'sk-proj.abc.v1'].entries())
      await post(d, envelope({}, { telemetry_schema_version: v, tool_call_id: `c${i}` }));
    await post(d, envelope({}, { telemetry_schema_version: 'hermes.observer.v3', tool_call_id: 'c9' }));
    // a vendor version keeps its name: that is what an operator needs to see
    expect(lines.map((l) => l['got'])).toEqual([`<${github.length} chars>`, '<15 chars>', '<14 chars>', 'hermes.observer.v3']);
    expect(JSON.stringify(lines)).not.toContain('Hunter2');
  });

  it('a body nested deeper than 64 levels → 400 with a reason, and nothing recursive ever sees it', async () => {
    const d = daemon();
    const deep = `${'{"a":'.repeat(5000)}{}${'}'.repeat(5000)}`;
    const r = await post(d, envelope({ tool_input: 'DEEP' }).replace('"DEEP"', deep));
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toBe('too-deep');
    expect((await post(d, envelope())).statusCode).toBe(200);
  });

  it('a lone surrogate in a session id is repaired', async () => {
    const d = daemon();
    const r = await post(d, '{"hook_event_name":"pre_tool_call","tool_name":"x","tool_input":{},"session_id":"s\\ud800x","extra":{"tool_call_id":"c1"}}');
    expect(r.statusCode).toBe(200);
    expect(d.memory.events.at(-1)?.session).toBe('s\ufffdx');
  });

  it('a long session id whose cut would split a surrogate pair maps fine (no half characters anywhere)', async () => {
    const d = daemon();
    const id = `${'a'.repeat(238)}😀${'b'.repeat(40)}`;
    const r = await post(d, envelope({ session_id: id }));
    expect(r.statusCode).toBe(200);
    const ev = d.memory.events.at(-1)!;
    expect(ev.session.length).toBeLessThanOrEqual(256);
    expect(ev.session).not.toMatch(/[\uD800-\uDFFF](?![\uDC00-\uDFFF])/);
    expect(() => encodeURIComponent(ev.session)).not.toThrow();
  });

  it('unknown routes → 404; healthz → ok', async () => {
    const d = daemon();
    expect((await d.app.inject({ method: 'GET', url: '/nope' })).statusCode).toBe(404);
    expect((await d.app.inject({ method: 'GET', url: '/healthz' })).json()).toMatchObject({ ok: true });
  });
});
