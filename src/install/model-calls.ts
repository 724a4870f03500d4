import { MODEL_CALL_HOOK, REGISTERED_HOOKS } from '../hermes/envelope.js';

/**
 * `install --no-model-calls`: leave Hermes's `post_api_request` (one hook call per model call, mapped to
 * `x.hermes.model.call`) out of what install registers. It is on by default.
 *
 * Shell transport: the event gets no entry in config.yaml and no approval in the allowlist; a re-run without the
 * flag adds them again, one with it takes ours out (the user's own entries for that event stay). Plugin transport:
 * `--no-model-calls` goes into hermes-aep.json's args next to the gates (`--control`, `--instruct`), and the plugin
 * then does not subscribe to `post_api_request` (plugin/hermes-aep/__init__.py, `hooks_for`). Nothing else reads it:
 * the daemon maps whatever arrives.
 */

/** The argument hermes-aep.json's args carry when model calls are off (read by the plugin only). */
export const NO_MODEL_CALLS_ARG = '--no-model-calls';

export interface ModelCallOptions {
  /** false: `--no-model-calls`; undefined or true: post_api_request is registered */
  readonly modelCalls?: boolean | undefined;
}

/** The events install registers: every registered hook, without post_api_request under `--no-model-calls`. */
export function installedHooks(opts: ModelCallOptions): readonly string[] {
  return opts.modelCalls === false ? REGISTERED_HOOKS.filter((h) => h !== MODEL_CALL_HOOK) : REGISTERED_HOOKS;
}

/** The plugin's arguments for the opt-out, after the target's and the gates'. */
export function modelCallArgs(opts: ModelCallOptions): string[] {
  return opts.modelCalls === false ? [NO_MODEL_CALLS_ARG] : [];
}

/** One line for the install report. */
export function modelCallSummary(opts: ModelCallOptions, transport: 'shell' | 'plugin' | 'webhook'): string {
  if (opts.modelCalls === false) {
    const how =
      transport === 'shell'
        ? `no ${MODEL_CALL_HOOK} hook`
        : transport === 'webhook'
          ? `${MODEL_CALL_HOOK} is not among the webhook's events`
          : `the plugin does not subscribe to ${MODEL_CALL_HOOK}`;
    return `  model calls: off (--no-model-calls: ${how}; no model-call spans, tokens or cost)`;
  }
  const cost = transport === 'shell' ? 'one more hook call, so one more shim start,' : transport === 'webhook' ? 'one more delivery' : 'one more hook call';
  return `  model calls: on (${MODEL_CALL_HOOK}: model-call spans, tokens and cost, for ${cost} per model call; --no-model-calls leaves it out)`;
}
