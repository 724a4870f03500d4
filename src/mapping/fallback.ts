import type { HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import type { MappedEvent } from './types.js';

/**
 * An unknown hook name → `x.hermes.<name with _ as .>` carrying no data: the
 * moment is recorded, its payload (unknown shape, possibly content) is not.
 * The AEP type grammar needs at least two segments after `x.hermes`, so a
 * one-word name rides as `x.hermes.hook.<name>`.
 */
export function fallbackType(hookName: string): string {
  const segments = hookName
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((s) => s.length > 0)
    .slice(0, 8);
  if (segments.length === 0) return 'x.hermes.hook.unknown';
  if (segments.length === 1) return `x.hermes.hook.${segments[0]}`;
  return `x.hermes.${segments.join('.')}`;
}

export function mapUnknownHook(env: HookEnvelope, _policy: CapturePolicy): MappedEvent[] {
  return [{ type: fallbackType(env.hook_event_name), data: {} }];
}
