import type { FakeStep } from '../support/fake-llm.js';

/**
 * A turn of two model calls with a tool call between them, each reply
 * reporting exact usage with every bucket (cache read, cache write,
 * reasoning): the recorded post_api_request envelopes carry what Hermes made
 * of these counts (test/unit/mapping/model-call-recorded.test.ts pins them).
 */
export const MODEL_CALLS = {
  marker: 'MARK-MODEL-CALLS',
  command: 'echo hi-model-calls',
  firstContent: 'Running the command first.',
  finalText: 'Final answer: the command printed hi-model-calls.',
  usage: [
    { prompt_tokens: 1200, completion_tokens: 40, cached_tokens: 800, cache_write_tokens: 300, reasoning_tokens: 25 },
    { prompt_tokens: 1350, completion_tokens: 30, cached_tokens: 1100, cache_write_tokens: 150, reasoning_tokens: 12 },
  ],
} as const;
export const modelCallsStep: FakeStep = {
  marker: MODEL_CALLS.marker,
  replies: [
    {
      type: 'tool_calls',
      content: MODEL_CALLS.firstContent,
      calls: [{ name: 'terminal', arguments: { command: MODEL_CALLS.command } }],
      usage: MODEL_CALLS.usage[0],
    },
    { type: 'text', content: MODEL_CALLS.finalText, usage: MODEL_CALLS.usage[1] },
  ],
};
