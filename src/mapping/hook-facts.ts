import type { HookFacts, StreamMark } from '../aep/mapped.js';
import type { HookEnvelope } from '../hermes/envelope.js';

/** The Hermes hooks whose reply can hold the call until a gate answers: the tool call about to run. */
const HOLDABLE: ReadonlySet<string> = new Set(['pre_tool_call']);
/** The Hermes hooks whose reply can carry context into the turn (steering): the turn about to start. */
const STEERABLE: ReadonlySet<string> = new Set(['pre_llm_call']);

/**
 * What the daemon's steps need of one hook beyond its events (aep/mapped.ts
 * `HookFacts`), read off the envelope as it came: the pricer's endpoint, the
 * drift sentinel, whether a gate may hold it or steering may ride its reply.
 * Never throws (a wrong type reads as absent, the sentinel excepted: the drift
 * watch reports its type).
 */
export function hookFacts(env: HookEnvelope): HookFacts {
  const extra = env.extra ?? undefined;
  const hook = env.hook_event_name;
  return {
    mayHold: HOLDABLE.has(hook),
    maySteer: STEERABLE.has(hook),
    toolName: () => env.tool_name ?? undefined,
    modelServer: () => {
      const v = extra?.base_url;
      return typeof v === 'string' ? v : undefined;
    },
    schemaVersion: () => extra?.telemetry_schema_version,
    stream: () => streamMark(hook, extra),
  };
}

/**
 * Hermes's stream observer hooks (agent/plugin_stream_hooks.py at hermes-agent
 * 0df5b5dc; fields per website/docs/user-guide/features/hooks.md at 006a5aeb):
 * `on_stream_start`, `on_stream_delta` (`kind` `text` or `reasoning`),
 * `on_stream_end`, each with `turn_id` and `iteration`. ASSUMPTION (the vendor
 * names no join key): `iteration` is the model call's `api_call_count` in the
 * same turn; both count the loop's model calls from 1 (docs/hermes-drift.md).
 */
const STREAM_PHASE: Readonly<Record<string, StreamMark['phase']>> = { on_stream_start: 'start', on_stream_delta: 'text', on_stream_end: 'end' };

function streamMark(hook: string, extra: Record<string, unknown> | undefined): StreamMark | undefined {
  const phase = Object.hasOwn(STREAM_PHASE, hook) ? STREAM_PHASE[hook] : undefined;
  if (!phase || !extra) return undefined;
  if (phase === 'text' && extra.kind !== 'text') return undefined;
  const run = typeof extra.turn_id === 'string' && extra.turn_id.length > 0 ? extra.turn_id : undefined;
  const call = extra.iteration;
  if (run === undefined || typeof call !== 'number' || !Number.isSafeInteger(call) || call < 0) return undefined;
  return { phase, run, call };
}
