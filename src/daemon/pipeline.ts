import type { HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import { mapHook } from '../mapping/map-hook.js';
import type { IdentityStage } from '../identity/identity-stage.js';
import type { EventBus } from '../sinks/event-bus.js';
import type { AepEvent } from '../aep/event.js';
import type { DriftWatch } from './drift.js';
import type { Logger } from './log.js';

/**
 * What became of one hook, once the durable sinks settled:
 * - `recorded`: every event it became reached the operating system (or it became none);
 * - `refused`: a durable sink could not take it (log failing, queue full), so it was
 *   NOT processed at all: no seq taken, no pairing state, no span. Safe to retry later;
 * - `lost`: it was processed, then some of its events could not be written (counted).
 *   Never retried: its state and spans already exist, a retry would duplicate them.
 */
export type HookOutcome =
  | { readonly status: 'recorded'; readonly events: AepEvent[] }
  | { readonly status: 'refused'; readonly reason: string }
  | { readonly status: 'lost'; readonly events: AepEvent[]; readonly lost: number; readonly reason: string };

/**
 * One hook, start to finish: admission → drift check → pure mapping →
 * identity → bus. Everything up to the bus runs synchronously, in arrival
 * order (that is what orders each session's events); the returned promise
 * settles when the durable sinks have the events (group commit), and never
 * rejects.
 */
export class HookPipeline {
  hooks = 0;
  /** hooks whose mapping or stamping threw: answered, counted, logged by class; never a crash */
  failed = 0;
  /** hooks refused before processing because a durable sink could not take them */
  refused = 0;
  /** hooks processed whose events (some or all) could not be written */
  lost = 0;

  constructor(
    private readonly policy: CapturePolicy,
    private readonly identity: IdentityStage,
    private readonly bus: EventBus,
    private readonly drift: DriftWatch,
    private readonly clock: () => Date = () => new Date(),
    private readonly log?: Logger,
  ) {}

  handle(env: HookEnvelope): Promise<HookOutcome> {
    this.hooks++;
    const refusal = this.bus.refusal();
    if (refusal) {
      this.refused++;
      return Promise.resolve({ status: 'refused', reason: refusal });
    }
    this.drift.check(env);
    let events: AepEvent[];
    try {
      events = this.identity.process(env, mapHook(env, this.policy), this.clock());
    } catch (err) {
      this.failed++;
      this.log?.error('hook could not be mapped; answered and counted', { error: (err as Error).name });
      return Promise.resolve({ status: 'recorded', events: [] });
    }
    const published = this.bus.publish(events);
    // AEP_DEBUG: the hook name and the event types and seqs it became; structural only
    this.log?.debug('hook mapped', { hook: /^[a-z0-9_]{1,64}$/.test(env.hook_event_name) ? env.hook_event_name : 'other', events: events.map((e) => `${e.type}#${e.seq}`).join(',') });
    return published.then((r): HookOutcome => {
      if (r.lost === 0) return { status: 'recorded', events };
      this.lost++;
      return { status: 'lost', events, lost: r.lost, reason: r.reason ?? 'not written' };
    });
  }
}
