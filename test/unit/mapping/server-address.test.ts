import { describe, expect, it } from 'vitest';
import { mirroredDaemon } from '../../support/otel-harness.js';
import type { Envelope } from '../../support/scripted-session.js';
import { meteredDaemon } from '../otel/metrics/metrics-harness.js';

/**
 * README, Spans/Metrics: a model call's `server.address` is the model server's host, "never its path or credentials".
 * Hermes's `base_url` may carry user info, a path and an API key in the query: only the host and port may reach a span
 * attribute or a metric attribute.
 */
const SENTINEL = 'hermes.observer.v1';
const SESSION = '20261204_100000_5e7ad0';
const TURN = `${SESSION}:task1:aaaa1111`;
const BASE_URL = 'https://Qz7username:pa55Qz7word@api.example.com:8443/v1/Qz7pathpart?key=Qz7MARKERkey#Qz7frag';
/** every part of BASE_URL that is not its host or port */
const FORBIDDEN = ['Qz7username', 'pa55Qz7word', 'Qz7pathpart', 'Qz7MARKERkey', 'Qz7frag', '/v1', 'https://'];

function session(): Envelope[] {
  const env = (hook: string, extra: Record<string, unknown>): Envelope => ({
    hook_event_name: hook,
    tool_name: null,
    tool_input: null,
    session_id: SESSION,
    cwd: '/srv/work',
    extra: { telemetry_schema_version: SENTINEL, ...extra },
  });
  const ids = { model: 'hermes-4', platform: 'cli' };
  return [
    env('on_session_start', ids),
    env('pre_llm_call', { turn_id: TURN, task_id: 'task1', user_message: 'hi', is_first_turn: true, ...ids }),
    env('post_api_request', {
      turn_id: TURN,
      task_id: 'task1',
      ...ids,
      response_model: 'hermes-4',
      provider: 'custom',
      api_mode: 'chat_completions',
      base_url: BASE_URL,
      api_request_id: 'req-1',
      api_call_count: 1,
      started_at: 1764669600,
      ended_at: 1764669601,
      finish_reason: 'stop',
      message_count: 2,
      usage: { input_tokens: 10, output_tokens: 5 },
    }),
    env('on_session_end', { turn_id: TURN, task_id: 'task1', completed: true, interrupted: false, ...ids }),
    env('on_session_finalize', { reason: 'shutdown', ...ids }),
  ];
}

const leaks = (text: string) => FORBIDDEN.filter((f) => text.includes(f));

describe('server.address from a base_url with credentials, a path and a query', () => {
  it('span attributes: server.address is the host, server.port the port, nothing else of the URL anywhere on a span', async () => {
    const h = await mirroredDaemon();
    try {
      await h.feed(session());
      const chat = h.spans().filter((s) => s.attributes['server.address'] !== undefined);
      expect(chat.length).toBeGreaterThan(0);
      for (const s of chat) expect([s.attributes['server.address'], s.attributes['server.port']]).toEqual(['api.example.com', 8443]);
      const text = JSON.stringify(h.spans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status, links: s.links })));
      expect(leaks(text)).toEqual([]);
    } finally {
      await h.app.close();
      await h.mirror.shutdown();
    }
  });

  it('metric attributes: server.address is the host, server.port the port, nothing else of the URL in any data point', async () => {
    const h = meteredDaemon();
    try {
      await h.feed(session());
      const metrics = await h.collect();
      const attrs = [...metrics.values()].flatMap((m) => m.dataPoints.map((p) => p.attributes));
      const withServer = attrs.filter((a) => a['server.address'] !== undefined);
      expect(withServer.length).toBeGreaterThan(0);
      for (const a of withServer) expect([a['server.address'], a['server.port']]).toEqual(['api.example.com', 8443]);
      expect(leaks(JSON.stringify(attrs))).toEqual([]);
    } finally {
      await h.app.close();
      await h.sink.shutdown();
    }
  });
});
