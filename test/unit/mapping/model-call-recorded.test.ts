import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { monotonicFactory } from 'ulid';
import { hookEnvelopeSchema, type HookEnvelope } from '../../../src/hermes/envelope.js';
import { mapHook, readHook } from '../../../src/mapping/map-hook.js';
import { CAPTURE_LEVELS, captureRank, type CaptureLevel } from '../../../src/core/capture-levels.js';
import { annotationsFor, type AnnotationNode } from '../../../src/capture/annotations.js';
import type { CapturePolicy } from '../../../src/capture/policy.js';
import { IdentityStage } from '../../../src/identity/identity-stage.js';
import { MODEL_CALLS } from '../../e2e/record/model-calls.js';
import { aepValidator } from '../../support/aep-validator.js';
import { ROOT } from '../../support/paths.js';

/**
 * `post_api_request` → `x.hermes.model.call`, pinned against the envelopes the
 * REAL Hermes sent (fixtures/hermes-recorded*\/raw/oneshot-model-calls.jsonl:
 * `hermes -z`, two model calls with a terminal tool call between them). The
 * fake model reported exact usage with every bucket (test/e2e/record/
 * model-calls.ts, on the wire as prompt_tokens_details.cached_tokens /
 * .cache_write_tokens and completion_tokens_details.reasoning_tokens); Hermes
 * normalized it (agent/usage_pricing.py normalize_usage: input_tokens is the
 * UNCACHED input) and the mapping must give back the GenAI totals the model
 * reported.
 */
const SETS = [
  { version: '0.18.2', file: path.join(ROOT, 'fixtures', 'hermes-recorded', 'raw', 'oneshot-model-calls.jsonl') },
  { version: '0.19.0', file: path.join(ROOT, 'fixtures', 'hermes-recorded-0.19.0', 'raw', 'oneshot-model-calls.jsonl') },
] as const;

const policyAt = (ceiling: CaptureLevel): CapturePolicy => ({
  ceiling,
  categories: { attention: 'redacted' },
  redact: { home: '/home/user' },
  agent: 'hermes',
});

function load(file: string): { all: HookEnvelope[]; calls: HookEnvelope[] } {
  const all = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => hookEnvelopeSchema.parse(JSON.parse(l)));
  return { all, calls: all.filter((e) => e.hook_event_name === 'post_api_request') };
}

/** The one event a post_api_request maps to, at a level. */
function modelCall(env: HookEnvelope, level: CaptureLevel): Record<string, unknown> {
  const out = mapHook(env, policyAt(level));
  expect(out.map((e) => e.type)).toEqual(['x.hermes.model.call']);
  return out[0]!.data as Record<string, unknown>;
}

/** Hermes's epoch seconds (`time.time()`) as RFC 3339, to the millisecond. */
const iso = (seconds: number) => new Date(Math.round(seconds * 1000)).toISOString();

/** Every data leaf whose annotation is above the event's own capture level (as capture-ceiling.test.ts). */
function above(node: AnnotationNode | undefined, value: unknown, level: CaptureLevel, at: string, root = true): string[] {
  const own = node?.capture ?? 'metadata';
  if (!root && captureRank(own) > captureRank(level)) return [at];
  if (Array.isArray(value)) return value.flatMap((v, i) => above(node?.items, v, level, `${at}[${i}]`, false));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => above(node?.properties?.[k], v, level, `${at}.${k}`, false));
  return [];
}

/** What the model said in call i (0-based), as Hermes's sanitized response carries it. */
const SAID = [
  { content: MODEL_CALLS.firstContent, tool: { name: 'terminal', arguments: { command: MODEL_CALLS.command } } },
  { content: MODEL_CALLS.finalText, tool: undefined },
] as const;
const CONTENT_STRINGS = [MODEL_CALLS.firstContent, MODEL_CALLS.finalText, MODEL_CALLS.command, 'NormalizedResponse', 'hi-model-calls'];

describe.each(SETS)('x.hermes.model.call from the recorded Hermes $version envelopes', ({ file }) => {
  const { all, calls } = load(file);

  it('the recording: two post_api_request, around the one tool call, with the usage Hermes normalized from what the fake model reported', () => {
    expect(all.map((e) => e.hook_event_name)).toEqual([
      'on_session_start',
      'pre_llm_call',
      'post_api_request',
      'pre_tool_call',
      'post_tool_call',
      'post_api_request',
      'on_session_end',
    ]);
    calls.forEach((env, i) => {
      const reported = MODEL_CALLS.usage[i]!;
      // CanonicalUsage: input_tokens is what is left of prompt_tokens after the cache read and write
      expect(env.extra?.usage).toEqual({
        input_tokens: reported.prompt_tokens - reported.cached_tokens - reported.cache_write_tokens,
        output_tokens: reported.completion_tokens,
        cache_read_tokens: reported.cached_tokens,
        cache_write_tokens: reported.cache_write_tokens,
        reasoning_tokens: reported.reasoning_tokens,
        request_count: 1,
        prompt_tokens: reported.prompt_tokens,
        total_tokens: reported.prompt_tokens + reported.completion_tokens,
      });
      // the shell transport stringifies the provider's raw object (`default=str`)
      expect(typeof env.extra?.assistant_message).toBe('string');
    });
  });

  it('metadata: exactly the call facts (model, provider, index, start/end, duration, finish reason, messages, usage per the GenAI rule, server)', () => {
    calls.forEach((env, i) => {
      const x = env.extra as Record<string, any>;
      const reported = MODEL_CALLS.usage[i]!;
      expect(x.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      expect(modelCall(env, 'metadata')).toEqual({
        model: 'fake-model',
        response_model: 'fake-model',
        provider: 'custom',
        api_mode: 'chat_completions',
        server_address: '127.0.0.1',
        server_port: Number(new URL(x.base_url as string).port),
        api_request_id: `${x.turn_id as string}:api:${i + 1}`,
        api_call: i + 1,
        started_at: iso(x.started_at as number),
        ended_at: iso(x.ended_at as number),
        duration_ms: Math.round((x.api_duration as number) * 1000),
        finish_reason: i === 0 ? 'tool_calls' : 'stop',
        message_count: i === 0 ? 2 : 4,
        // every input token, the cached and the cache-written ones included: what the model reported as prompt_tokens
        'gen_ai.usage.input_tokens': reported.prompt_tokens,
        'gen_ai.usage.output_tokens': reported.completion_tokens,
        'gen_ai.usage.cache_read.input_tokens': reported.cached_tokens,
        'gen_ai.usage.cache_creation.input_tokens': reported.cache_write_tokens,
        'gen_ai.usage.reasoning.output_tokens': reported.reasoning_tokens,
        assistant_content_chars: SAID[i]!.content.length,
        assistant_tool_call_count: SAID[i]!.tool ? 1 : 0,
      });
    });
  });

  it("the timing is the envelope's own: started_at + api_duration = ended_at; the second call starts after the tool ran", () => {
    const [first, second] = calls.map((env) => modelCall(env, 'metadata'));
    for (const d of [first!, second!]) {
      expect(Date.parse(d.ended_at as string) - Date.parse(d.started_at as string)).toBeGreaterThanOrEqual((d.duration_ms as number) - 1);
      expect(Date.parse(d.ended_at as string) - Date.parse(d.started_at as string)).toBeLessThanOrEqual((d.duration_ms as number) + 1);
    }
    const toolDone = all.findIndex((e) => e.hook_event_name === 'post_tool_call');
    expect(all.indexOf(calls[1]!)).toBeGreaterThan(toolDone);
    expect(Date.parse(second!.started_at as string)).toBeGreaterThanOrEqual(Date.parse(first!.ended_at as string));
  });

  it.each(['none', 'metadata'] as const)('%s: no content: neither the assistant text nor the tool-call arguments nor the raw object', (level) => {
    for (const env of calls) {
      const data = modelCall(env, level);
      expect(data).not.toHaveProperty('output');
      expect(data).not.toHaveProperty('output_redacted');
      const text = JSON.stringify(data);
      for (const s of CONTENT_STRINGS) expect(text).not.toContain(s);
    }
  });

  it('redacted: output_redacted only, with the text (nothing here to redact) and the tool call id; never output', () => {
    calls.forEach((env, i) => {
      const data = modelCall(env, 'redacted');
      expect(data).not.toHaveProperty('output');
      const out = data.output_redacted as { content?: string; tool_calls?: Array<Record<string, unknown>> };
      expect(out.content).toBe(SAID[i]!.content);
      const ids = ((env.extra as any).response.assistant_message.tool_calls as Array<{ id: string }>).map((c) => c.id);
      expect((out.tool_calls ?? []).map((c) => c.id)).toEqual(ids);
    });
  });

  it('full: output only, with the text and the tool call id; never output_redacted', () => {
    calls.forEach((env, i) => {
      const data = modelCall(env, 'full');
      expect(data).not.toHaveProperty('output_redacted');
      const out = data.output as { content?: string; tool_calls?: Array<Record<string, unknown>> };
      expect(out.content).toBe(SAID[i]!.content);
      const ids = ((env.extra as any).response.assistant_message.tool_calls as Array<{ id: string }>).map((c) => c.id);
      expect((out.tool_calls ?? []).map((c) => c.id)).toEqual(ids);
    });
  });

  // Hermes's sanitized response carries its own ToolCall dataclass (agent/transports/types.py), flattened by
  // asdict: {id, name, arguments (a JSON string), provider_data}. Not OpenAI's {id, type, function: {name, arguments}}.
  it.each(['redacted', 'full'] as const)('%s: the tool call keeps its name and arguments from the real (flat) ToolCall shape', (level) => {
    const env = calls[0]!;
    const raw = (env.extra as any).response.assistant_message.tool_calls[0] as Record<string, unknown>;
    expect(Object.keys(raw).sort()).toEqual(['arguments', 'id', 'name', 'provider_data']);
    const data = modelCall(env, level);
    const out = (level === 'full' ? data.output : data.output_redacted) as { tool_calls?: unknown[] };
    expect(out.tool_calls).toEqual([{ id: raw.id, name: SAID[0].tool.name, arguments: SAID[0].tool.arguments }]);
  });

  it('the output never comes from extra.assistant_message (the raw object the shell transport stringified)', () => {
    const env = calls[0]!;
    const x = env.extra as Record<string, unknown>;
    for (const level of ['redacted', 'full'] as const) {
      const want = modelCall(env, level);
      // a different raw object, as a string or as an object, changes nothing
      const planted = { content: 'PLANTED-RAW', tool_calls: [{ id: 'planted', function: { name: 'planted', arguments: '{"planted":1}' } }] };
      for (const assistant_message of [`NormalizedResponse(content='PLANTED-RAW')`, planted]) {
        const got = modelCall({ ...env, extra: { ...x, assistant_message } }, level);
        expect(got).toEqual(want);
        expect(JSON.stringify(got)).not.toContain('planted');
        expect(JSON.stringify(got)).not.toContain('PLANTED');
      }
      // without the sanitized response there is no output at all, though the raw string still names the text
      const { response: _response, ...withoutResponse } = x;
      const bare = modelCall({ ...env, extra: withoutResponse }, level);
      expect(bare).not.toHaveProperty('output');
      expect(bare).not.toHaveProperty('output_redacted');
      expect(String(x.assistant_message)).toContain(MODEL_CALLS.firstContent);
      expect(JSON.stringify(bare)).not.toContain(MODEL_CALLS.firstContent);
    }
  });

  it.each(CAPTURE_LEVELS)('stamped at %s: schema-valid, no field above the level, nothing at all at none', (level) => {
    const validate = aepValidator();
    const ulid = monotonicFactory();
    const policy = policyAt(level);
    const stage = new IdentityStage({ epoch: 0, host: 'h', policy, newId: () => ulid() });
    let t = Date.parse('2026-12-01T19:00:00Z');
    const events = all.flatMap((env) => stage.process(readHook(env, policy), new Date((t += 1000))));
    const mc = events.filter((e) => e.type === 'x.hermes.model.call');
    expect(mc).toHaveLength(2);
    for (const ev of mc) {
      expect(ev.capture).toBe(level);
      expect(validate(ev)).toEqual([]);
      expect(above(annotationsFor(ev.type), ev.data, ev.capture, ev.type)).toEqual([]);
      if (level === 'none') expect(ev.data).toEqual({});
      if (captureRank(level) <= captureRank('metadata')) for (const s of CONTENT_STRINGS) expect(JSON.stringify(ev)).not.toContain(s);
    }
  });
});
