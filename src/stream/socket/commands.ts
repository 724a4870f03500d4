import type { StreamHubApi } from '../hub-types.js';
import type { WireEvent } from '../../aep/wire.js';
import type { ClaimRegistry } from './claims.js';
import type { StreamAccess } from './deps.js';
import { errorFrame, type OwnControlPort } from './frames.js';
import { consumes, type Role } from './hello.js';
import type { ErrorCode } from '../../core/errors.js';

/** What routing one command needs from the connection that sent it. */
export interface CommandContext {
  readonly access: StreamAccess;
  readonly role: Role;
  readonly hub: Pick<StreamHubApi, 'isOwnSession'>;
  readonly claims: ClaimRegistry;
  /** a frame back to the sender */
  reply(text: string): void;
  /** keep the forwarded command in the history of the session it addresses (in this connection's order) */
  persist(w: WireEvent): void;
  /** the control target of this daemon's own sessions (it persists, dedupes and acks them itself) */
  readonly own?: Pick<OwnControlPort, 'command'>;
}

export type CommandOutcome = { readonly routed: true } | { readonly routed: false; readonly code: string };

/**
 * Route one command Event (AEP-0004 §4): refused toward the sender with a
 * `cause`-correlated `error` frame that never becomes an Event (§4 items 1,
 * 2, 5) — unauthenticated binding, a claimant whose declared `accepts` lacks
 * the type, no live claimant, or more than one; else forwarded as received to
 * the single claimant (§4 item 4) and persisted. A command for one of this
 * daemon's own sessions goes to its control target, which answers it in the
 * session's history (acks are Events there, never frames).
 */
export function routeCommand(ctx: CommandContext, w: WireEvent, text: string): CommandOutcome {
  const refuse = (code: ErrorCode, detail: string): CommandOutcome => {
    ctx.reply(errorFrame(code, detail, { cause: w.id }));
    return { routed: false, code };
  };
  if (ctx.access.kind !== 'authenticated') return refuse('unauthorized', 'commands need an authenticated connection (AEP-0004 §4)');
  if (!consumes(ctx.role)) return refuse('unauthorized', 'commands are sent on a consumer or both connection');
  const session = w.session;
  if (session === undefined) return refuse('no-route', 'a command addresses a session');
  if (ctx.hub.isOwnSession(session)) {
    // this daemon is the target: its ack (or nack) is an Event of that session, AEP-0004 §3
    if (!ctx.own) return refuse('unsupported', 'this daemon accepts no command for its own sessions');
    ctx.own.command(w);
    return { routed: true };
  }
  const targets = ctx.claims.claimants(session);
  if (targets.length === 0) return refuse('no-route', 'no connected emitter claims this session');
  if (targets.length > 1) return refuse('ambiguous', `${targets.length} connected emitters claim this session`);
  const target = targets[0]!;
  const accepts = target.peer.control?.['accepts'];
  if (Array.isArray(accepts) && !accepts.includes(w.type)) return refuse('unsupported', "the target's declared control.accepts does not list this type");
  target.forward(text);
  ctx.persist(w);
  return { routed: true };
}
