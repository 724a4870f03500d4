import type { HookFacts } from '../aep/mapped.js';
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
  };
}
