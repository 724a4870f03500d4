/**
 * Waiting for a command's acknowledgement inside the daemon: a live
 * subscription to the hub for the command's session, opened BEFORE the
 * command goes to its target (so the ack cannot slip past), matched exactly
 * as the CLI matches what it receives (control-cli/ack.ts `classify`: the
 * `control.accepted` / `control.rejected` whose `cause` is the command id).
 * The target acks in the session's history; the hub publishes it once the
 * history holds it, so an accepted answer is durable when it is reported.
 */
import { classify, type Ack } from '../control-cli/ack.js';
import type { StreamHubApi } from '../stream/hub-types.js';
import { ACK_WINDOW_MS } from '../stream/socket/frames.js';

/** How long an ack is waited for: the window this daemon declares, and the grace the CLI adds (control-cli/send-command.ts GRACE_MS). */
export const ACK_WAIT_MS = ACK_WINDOW_MS + 2_000;

const ACK_TYPES: ReadonlySet<string> = new Set(['control.accepted', 'control.rejected']);

export type AckWait =
  | { readonly kind: 'ack'; readonly ack: Ack }
  | { readonly kind: 'timeout' }
  /** the hub let the subscription go (the daemon is stopping) */
  | { readonly kind: 'stopping' };

export interface PendingAck {
  /** settles with the ack, the deadline, or the daemon stopping; the subscription is closed by then */
  readonly result: Promise<AckWait>;
  /** give up now (the command was refused before reaching its target) */
  cancel(): void;
}

export function awaitAck(
  hub: Pick<StreamHubApi, 'subscribe'>,
  command: { readonly id: string; readonly session: string },
  windowMs: number,
): PendingAck | { readonly refused: string } {
  let settle: (w: AckWait) => void = () => undefined;
  const result = new Promise<AckWait>((resolve) => (settle = resolve));
  let done = false;
  const pending = { commandId: command.id };
  const sub = hub.subscribe(
    { filter: (w) => w.session === command.session && ACK_TYPES.has(w.type) },
    {
      deliver: (_w, line) => {
        const v = classify(line, pending);
        if (v !== undefined && 'ack' in v) finish({ kind: 'ack', ack: v.ack });
      },
      exhausted: () => undefined,
      replayed: () => undefined,
      kick: () => finish({ kind: 'stopping' }),
      pending: () => 0,
      drained: () => Promise.resolve(),
    },
  );
  if ('code' in sub) return { refused: sub.detail };
  const timer = setTimeout(() => finish({ kind: 'timeout' }), windowMs);
  function finish(w: AckWait): void {
    if (done) return;
    done = true;
    clearTimeout(timer);
    if (!('code' in sub)) sub.close();
    settle(w);
  }
  return { result, cancel: () => finish({ kind: 'timeout' }) };
}
