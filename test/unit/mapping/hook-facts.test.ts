import { describe, expect, it } from 'vitest';
import { defaultPolicy } from '../../../src/capture/policy.js';
import { REGISTERED_HOOKS, TELEMETRY_SCHEMA_VERSION, hookEnvelopeSchema } from '../../../src/hermes/envelope.js';
import { readHook } from '../../../src/mapping/map-hook.js';
import { priceModelCalls, type PriceSource } from '../../../src/usage/price-step.js';
import type { PriceCall } from '../../../src/usage/pricer.js';

/**
 * The facts a mapped hook carries for the daemon's steps (aep/mapped.ts `HookFacts`): the pricer, the drift watch
 * and the control step read these, never the Hermes payload itself.
 */
const policy = defaultPolicy({ home: '/home/dev' });
const read = (hook: string, extra: Record<string, unknown> = {}, tool: string | null = null) =>
  readHook(hookEnvelopeSchema.parse({ hook_event_name: hook, tool_name: tool, tool_input: null, session_id: 's1', cwd: '/', extra }), policy);

describe('which hooks a gate may hold and which may carry steering', () => {
  it('a tool call about to run may be held, and carries no steering', () => {
    expect(read('pre_tool_call', { tool_call_id: 'c1' }, 'terminal').facts).toMatchObject({ mayHold: true, maySteer: false });
  });

  it('a turn start may carry steering, and is never held', () => {
    expect(read('pre_llm_call', { turn_id: 's1:t:1', user_message: 'hi' }).facts).toMatchObject({ mayHold: false, maySteer: true });
  });

  it.each([...REGISTERED_HOOKS.filter((h) => h !== 'pre_tool_call' && h !== 'pre_llm_call'), 'kanban_task_claimed'])('%s: neither', (hook) => {
    expect(read(hook).facts).toMatchObject({ mayHold: false, maySteer: false });
  });
});

describe('the tool name a gate tests', () => {
  it('is the name as Hermes sent it', () => {
    expect(read('pre_tool_call', {}, 'terminal').facts.toolName()).toBe('terminal');
    expect(read('pre_tool_call').facts.toolName()).toBeUndefined();
  });

  it('a secret-shaped name: the gate still sees it as sent, while the events and any serialised form of the mapped hook carry it redacted', () => {
    const secret = `ghp_${'Qz7'.repeat(12)}`;
    const mapped = read('pre_tool_call', { tool_call_id: 'c1' }, `tool-${secret}`);
    expect(mapped.facts.toolName()).toBe(`tool-${secret}`);
    expect(JSON.stringify(mapped)).not.toContain(secret);
    expect(JSON.stringify(mapped.events)).toContain('redacted-');
  });
});

describe("the model server's address", () => {
  const url = 'https://user:pw@api.example.com:8443/v1/path?key=k#f';

  it('is base_url as sent, path and query kept (the pricer routes by them), and never serialised', () => {
    const mapped = read('post_api_request', { model: 'm', base_url: url });
    expect(mapped.facts.modelServer()).toBe(url);
    expect(JSON.stringify(mapped)).not.toContain('key=k');
  });

  it.each([
    ['absent', {}],
    ['a number', { base_url: 8080 }],
    ['an object', { base_url: { host: 'x' } }],
  ])('%s: undefined', (_what, extra) => {
    expect(read('post_api_request', { model: 'm', ...extra }).facts.modelServer()).toBeUndefined();
  });

  it('is what the price step hands the pricer', () => {
    const seen: (string | undefined)[] = [];
    const pricer: PriceSource = {
      price: (call: PriceCall) => {
        seen.push(call.baseUrl);
        return undefined;
      },
    };
    const usage = { input_tokens: 10, output_tokens: 2 };
    priceModelCalls(read('post_api_request', { model: 'm', base_url: url, usage }), pricer, new Date(0));
    priceModelCalls(read('post_api_request', { model: 'm', usage }), pricer, new Date(0));
    expect(seen).toEqual([url, undefined]);
  });
});

describe('the telemetry schema version the hook declared (the drift sentinel)', () => {
  it('the pinned one, another, a wrong type and none read as they came', () => {
    expect(read('on_session_start', { telemetry_schema_version: TELEMETRY_SCHEMA_VERSION }).facts.schemaVersion()).toBe(TELEMETRY_SCHEMA_VERSION);
    expect(read('on_session_start', { telemetry_schema_version: 'hermes.observer.v2' }).facts.schemaVersion()).toBe('hermes.observer.v2');
    expect(read('on_session_start', { telemetry_schema_version: 7 }).facts.schemaVersion()).toBe(7);
    expect(read('on_session_start').facts.schemaVersion()).toBeUndefined();
  });
});
