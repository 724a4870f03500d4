import type { HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import type { MappedEvent } from './types.js';
import { X_HERMES_PREFIX, type XHermesFallbackType } from '../aep/lifecycle.js';

/**
 * An unknown hook name → `x.hermes.<name with _ as .>` carrying no data: the
 * moment is recorded, its payload (unknown shape, possibly content) is not.
 * The AEP type grammar needs at least two segments after `x.hermes`, so a
 * one-word name rides as `x.hermes.hook.<name>`.
 */
export function fallbackType(hookName: string): XHermesFallbackType {
  const segments = hookName
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((s) => s.length > 0)
    .slice(0, 8);
  if (segments.length === 0) return `${X_HERMES_PREFIX}hook.unknown`;
  if (segments.length === 1) return `${X_HERMES_PREFIX}hook.${segments[0]}`;
  return `${X_HERMES_PREFIX}${segments.join('.')}`;
}

export function mapUnknownHook(env: HookEnvelope, _policy: CapturePolicy): MappedEvent[] {
  return [{ type: fallbackType(env.hook_event_name), data: {} }];
}
