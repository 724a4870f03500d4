import type { HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';

import type { MappedEvent } from '../aep/mapped.js';

export type { MappedEvent };

/** A mapper for one hook family: envelope in, zero or more events out. */
export type HookMapper = (env: HookEnvelope, policy: CapturePolicy) => MappedEvent[];
