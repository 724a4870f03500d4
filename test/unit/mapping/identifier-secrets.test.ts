/**
 * Break: secrets in identifier-shaped fields leaked at the default capture
 * level. A model, provider or response model holding a key, a subagent role or
 * status, a tool name or call id, an approval's pattern key (the event
 * `subject`) passed the identifier-shape checks verbatim into the history,
 * span names and attributes, metric labels and log records.
 *
 * Each planted secret (an OpenAI project key, a GitHub token, a JWT) rides in
 * every identifier field Hermes sends; at the default policy no 10-character
 * run of it may reach the mapped events, the events every sink is given
 * (history, stream), the spans, the metric points or the log records.
 */
import { InMemoryLogRecordExporter } from '@opentelemetry/sdk-logs';
import { JsonLogsSerializer } from '@opentelemetry/otlp-transformer';
import { describe, expect, it } from 'vitest';
import { AepLogSink } from '../../../src/otel/logs/log-sink.js';
import { loadLogsConfig } from '../../../src/otel/logs/logs-config.js';
import { defaultPolicy } from '../../../src/capture/policy.js';
import { ControlTarget } from '../../../src/control/control-target.js';
import type { ControlSettings } from '../../../src/control/control-types.js';
import { controlStep } from '../../../src/control/hook-step.js';
import { silentLogger } from '../../../src/core/logger.js';
import { hookEnvelopeSchema } from '../../../src/hermes/envelope.js';
import { readHook } from '../../../src/mapping/map-hook.js';
import { mirroredDaemon } from '../../support/otel-harness.js';
import { inProcessDaemon } from '../../support/in-process-daemon.js';
import { readJson } from '../../support/paths.js';
import type { Envelope } from '../../support/scripted-session.js';
import { meteredDaemon } from '../otel/metrics/metrics-harness.js';

const SENTINEL = 'hermes.observer.v1';
const SESSION = '20261202_100000_1d5ec7';

/** Planted secrets, each one the detector finds in content. Built from parts so no scanner flags this file. */
const SECRETS = {
  openai: ['sk', 'proj', 'Xq3vT9kLm2Np8Rs4Wy6Zb1Cd5Fg7Hj0'].join('-'),
  github: ['ghp', 'R8t2Yk5Wq9Lm3Nv7Bx1Cz4Df6Gh0Js2Pa8Qe'].join('_'),
  jwt: ['eyJhbGciOiJIUzI1NiJ9', 'eyJzIjoxfQ', 'c2lnbmF0dXJlLXBhcnQtMDE'].join('.'),
} as const;
type SecretName = keyof typeof SECRETS;

const WINDOW = 10;
/** Which planted secrets have a 10-character run in `text`. */
function leaks(text: string): string[] {
  return (Object.entries(SECRETS) as [SecretName, string][])
    .filter(([, s]) => {
      for (let i = 0; i + WINDOW <= s.length; i++) if (text.includes(s.slice(i, i + WINDOW))) return true;
      return false;
    })
    .map(([name]) => name);
}

/** A session whose every identifier-shaped field carries `secret` (behind an ordinary-looking prefix where a field has one). */
function plantedSession(secret: string): Envelope[] {
  const turn = `${SESSION}:task1:aaaa1111`;
  const env = (hook: string, extra: Record<string, unknown>, over: Partial<Envelope> = {}): Envelope => ({
    hook_event_name: hook,
    tool_name: null,
    tool_input: null,
    session_id: SESSION,
    cwd: '/srv/work',
    ...over,
    extra: { telemetry_schema_version: SENTINEL, ...extra },
  });
  const model = `model-${secret}`;
  const ids = { model, platform: `cli.${secret}` };
  const tool = `tool-${secret}`;
  const call = `call.${secret}`;
  const child = `child.${secret}`;
  return [
    env('on_session_start', ids),
    env('pre_llm_call', { turn_id: turn, task_id: 'task1', user_message: 'hi', is_first_turn: true, ...ids }),
    env('post_api_request', {
      turn_id: turn,
      task_id: 'task1',
      ...ids,
      response_model: `resp-${secret}`,
      provider: `prov-${secret}`,
      api_mode: 'chat_completions',
      base_url: 'https://api.example.com/v1',
      api_request_id: `req.${secret}`,
      api_call_count: 1,
      started_at: 1764669600,
      ended_at: 1764669601,
      finish_reason: 'stop',
      message_count: 2,
      usage: { input_tokens: 10, output_tokens: 5 },
    }),
    env('pre_tool_call', { tool_call_id: call, turn_id: turn, task_id: 'task1' }, { tool_name: tool, tool_input: { command: 'ls' } }),
    env(
      'post_tool_call',
      { tool_call_id: call, turn_id: turn, task_id: 'task1', status: 'error', error_type: `err.${secret}`, error_message: 'x', duration_ms: 3 },
      { tool_name: tool },
    ),
    env(
      'pre_approval_request',
      {
        command: 'rm -rf build',
        description: 'delete',
        pattern_key: secret,
        pattern_keys: [secret],
        session_key: SESSION,
        surface: 'cli',
        tool_call_id: 'c2',
        turn_id: turn,
      },
      { session_id: '' },
    ),
    env(
      'post_approval_response',
      {
        command: 'rm -rf build',
        description: 'delete',
        pattern_key: secret,
        pattern_keys: [secret],
        session_key: SESSION,
        surface: 'cli',
        choice: 'once',
        tool_call_id: 'c2',
        turn_id: turn,
      },
      { session_id: '' },
    ),
    env(
      'post_approval_response',
      { pattern_key: 'rule', pattern_keys: [`rule.${secret}`], surface: 'smart', choice: 'smart_approve', decided_by: `aux.${secret}`, session_key: SESSION },
      { session_id: '' },
    ),
    env('api_request_error', {
      turn_id: turn,
      task_id: 'task1',
      status_code: 401,
      retry_count: 0,
      reason: `auth.${secret}`,
      error: { type: 'E', message: 'no' },
      provider: `prov-${secret}`,
      ...ids,
    }),
    env('subagent_start', { parent_session_id: SESSION, parent_turn_id: turn, child_session_id: child, child_role: `leaf-${secret}`, child_goal: 'g' }),
    env('subagent_stop', {
      parent_session_id: SESSION,
      parent_turn_id: turn,
      child_session_id: child,
      child_role: `leaf-${secret}`,
      child_status: `done-${secret}`,
      duration_ms: 5,
    }),
    env('on_session_end', { turn_id: turn, task_id: 'task1', completed: true, interrupted: false, ...ids }),
    env('on_session_reset', { reason: `new.${secret}` }),
    env('on_session_finalize', { reason: 'shutdown', ...ids }),
  ];
}

const names = Object.keys(SECRETS) as SecretName[];

describe('secrets in identifier-shaped fields never leave, at the default capture level', () => {
  it.each(names)('%s: the mapped events and their keys', (name) => {
    const policy = defaultPolicy({ home: '/home/dev' });
    const mapped = plantedSession(SECRETS[name]).map((e) => readHook(hookEnvelopeSchema.parse(e), policy));
    expect(leaks(JSON.stringify(mapped))).toEqual([]);
    // the fields are still there, replaced, not dropped: the same value always gets the same stand-in
    const models = mapped
      .flatMap((m) => m.events)
      .flatMap((e) => (e.type === 'x.hermes.model.call' ? [e.data.model] : e.ext?.hermesmodel ? [e.ext.hermesmodel] : []));
    expect(models.length).toBeGreaterThanOrEqual(3);
    expect(new Set(models).size).toBe(1);
    expect(models[0]).toMatch(/^redacted-[0-9a-f]{16}$/);
  });

  it.each(names)('%s: the events every sink is given (history, stream)', async (name) => {
    const d = inProcessDaemon();
    for (const e of plantedSession(SECRETS[name])) expect((await d.app.inject({ method: 'POST', url: '/hook', payload: e })).statusCode).toBe(200);
    expect(d.memory.events.length).toBeGreaterThan(10);
    expect(d.memory.events.some((e) => e.subject !== undefined && e.type === 'attention.requested')).toBe(true);
    expect(leaks(JSON.stringify(d.memory.events))).toEqual([]);
    await d.app.close();
  });

  it.each(names)('%s: span names and attributes', async (name) => {
    const h = await mirroredDaemon();
    await h.feed(plantedSession(SECRETS[name]));
    const spans = h.spans();
    expect(spans.some((s) => s.name.startsWith('chat '))).toBe(true);
    const text = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status, links: s.links })));
    expect(leaks(text)).toEqual([]);
    await h.app.close();
    await h.mirror.shutdown();
  });

  it.each(names)('%s: metric attributes', async (name) => {
    const h = meteredDaemon();
    await h.feed(plantedSession(SECRETS[name]));
    const metrics = await h.collect();
    expect(metrics.size).toBeGreaterThan(0);
    expect(leaks(JSON.stringify([...metrics.values()].map((m) => m.dataPoints.map((p) => p.attributes))))).toEqual([]);
    await h.app.close();
    await h.sink.shutdown();
  });

  it.each(names)('%s: log records', async (name) => {
    const exporter = new InMemoryLogRecordExporter();
    const sink = new AepLogSink({
      config: loadLogsConfig({ OTEL_LOGS_EXPORTER: 'otlp', OTEL_BLRP_SCHEDULE_DELAY: '0' }),
      exporter,
      agent: 'hermes',
      version: 'test',
    });
    const d = inProcessDaemon({ consumers: [sink] });
    for (const e of plantedSession(SECRETS[name])) expect((await d.app.inject({ method: 'POST', url: '/hook', payload: e })).statusCode).toBe(200);
    await sink.flush();
    const records = exporter.getFinishedLogRecords();
    expect(records.length).toBeGreaterThan(10);
    expect(leaks(Buffer.from(JsonLogsSerializer.serializeRequest(records) ?? new Uint8Array()).toString('utf8'))).toEqual([]);
    await d.app.close();
    await sink.shutdown();
  });
});

/** Content fields: the capture gating decides them (absent at metadata, redacted at redacted), not this step. */
const CONTENT = new Set([
  'user_message',
  'conversation_history',
  'command',
  'description',
  'result',
  'error_message',
  'error',
  'child_goal',
  'child_summary',
  'response',
  'assistant_message',
]);

/** Every non-content string of a hook envelope with a secret appended: whatever identifier a mapping reads, now or later. */
function plantEverywhere(input: Record<string, unknown>, secret: string): Record<string, unknown> {
  const extra = (input.extra ?? {}) as Record<string, unknown>;
  const planted = Object.fromEntries(
    Object.entries(extra).map(([k, v]) => [
      k,
      CONTENT.has(k) || k === 'telemetry_schema_version'
        ? v
        : typeof v === 'string'
          ? `${v}.${secret}`
          : Array.isArray(v)
            ? v.map((x) => (typeof x === 'string' ? `${x}.${secret}` : x))
            : v,
    ]),
  );
  const plant = (v: unknown) => (typeof v === 'string' && v.length > 0 ? `${v}.${secret}` : v);
  return { ...input, tool_name: plant(input.tool_name), session_id: plant(input.session_id), extra: planted };
}

describe('every identifier of every pinned Hermes hook (fixtures/aep/hermes.json), planted', () => {
  const fixture = readJson<{ hooks: Record<string, { input: Record<string, unknown> }> }>('fixtures/aep/hermes.json');
  const cases = Object.entries(fixture.hooks).flatMap(([hook, c]) => names.map((n) => [hook, n, c.input] as const));
  it.each(cases)('%s with %s', (_hook, name, input) => {
    const env = hookEnvelopeSchema.parse(plantEverywhere(input, SECRETS[name]));
    const mapped = readHook(env, defaultPolicy({ home: '/home/dev' }));
    expect(leaks(JSON.stringify(mapped))).toEqual([]);
  });
});

describe('the operator gate card names the tool as the mapping does', () => {
  it.each(names)('%s in the held tool name stays out of the card prompt', (name) => {
    const policy = defaultPolicy({ home: '/home/dev' });
    const settings = { gate: true, gateTools: /^.*$/, holdMs: 55_000, instruct: false } as ControlSettings;
    const target = new ControlTarget({ settings, policy, log: silentLogger });
    const env = hookEnvelopeSchema.parse({
      hook_event_name: 'pre_tool_call',
      tool_name: `tool-${SECRETS[name]}`,
      tool_input: { command: 'ls' },
      session_id: SESSION,
      extra: { tool_call_id: 'c1', turn_id: `${SESSION}:t:1` },
    });
    const step = controlStep(target, settings, policy, readHook(env, policy), new Date(0), { holdMs: 58_000 });
    const card = step.mapped.events.find((e) => e.type === 'attention.requested');
    expect(card).toBeDefined();
    expect(JSON.stringify(card)).toContain('asks to run the tool redacted-');
    expect(leaks(JSON.stringify(step.mapped))).toEqual([]);
  });
});

describe("a model call's tool calls at redacted", () => {
  it.each(names)('%s in a tool call id or name stays out of output_redacted', (name) => {
    const policy = { ceiling: 'redacted', categories: {}, redact: { home: '/home/dev' }, agent: 'hermes' } as const;
    const env = hookEnvelopeSchema.parse({
      hook_event_name: 'post_api_request',
      session_id: SESSION,
      extra: {
        model: 'hermes-4',
        response: { assistant_message: { content: 'ok', tool_calls: [{ id: `call.${SECRETS[name]}`, name: `tool-${SECRETS[name]}`, arguments: '{"a":1}' }] } },
      },
    });
    const mapped = readHook(env, policy);
    const call = mapped.events[0]!;
    expect(call.type === 'x.hermes.model.call' ? call.data.output_redacted?.tool_calls?.[0] : undefined).toMatchObject({ arguments: { a: 1 } });
    expect(leaks(JSON.stringify(mapped))).toEqual([]);
  });
});
