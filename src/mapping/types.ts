import type { HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';

/** One AEP event as the pure mapping produces it: no identity, no clock. */
export interface MappedEvent {
  readonly type: string;
  readonly data: Record<string, unknown>;
  readonly subject?: string;
}

/** A mapper for one hook family: envelope in, zero or more events out. */
export type HookMapper = (env: HookEnvelope, policy: CapturePolicy) => MappedEvent[];
