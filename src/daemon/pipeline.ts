import type { HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import { mapHook } from '../mapping/map-hook.js';
import type { IdentityStage } from '../identity/identity-stage.js';
import type { EventBus } from '../sinks/event-bus.js';
import type { AepEvent } from '../aep/event.js';
import type { DriftWatch } from './drift.js';
import type { Logger } from './log.js';

/**
 * One hook, start to finish: drift check → pure mapping → identity → bus.
 * Synchronous on purpose: hooks are processed in arrival order, and nothing
 * here waits on a sink.
 */
export class HookPipeline {
  hooks = 0;
  /** hooks whose mapping or stamping threw: answered, counted, logged by class; never a crash */
  failed = 0;

  constructor(
    private readonly policy: CapturePolicy,
    private readonly identity: IdentityStage,
    private readonly bus: EventBus,
    private readonly drift: DriftWatch,
    private readonly clock: () => Date = () => new Date(),
    private readonly log?: Logger,
  ) {}

  /**
   * `spooled`: the hook came from the shim's spool. Its events are timed at
   * its arrival, and carry its spool key (`hermesspool`) so a restart can tell
   * a file whose events were written but which was not yet deleted.
   */
  handle(env: HookEnvelope, spooled?: { readonly arrival: Date; readonly key: string }): AepEvent[] {
    this.hooks++;
    this.drift.check(env);
    let events: AepEvent[];
    try {
      events = this.identity.process(env, mapHook(env, this.policy), spooled?.arrival ?? this.clock());
      if (spooled) events = events.map((e) => ({ ...e, hermesspool: spooled.key }));
    } catch (err) {
      this.failed++;
      this.log?.error('hook could not be mapped; answered and counted', { error: (err as Error).name });
      return [];
    }
    this.bus.publish(events);
    // AEP_DEBUG: the hook name and the event types and seqs it became; structural only
    this.log?.debug('hook mapped', { hook: /^[a-z0-9_]{1,64}$/.test(env.hook_event_name) ? env.hook_event_name : 'other', events: events.map((e) => `${e.type}#${e.seq}`).join(',') });
    return events;
  }
}
