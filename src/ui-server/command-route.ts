/**
 * One answer or instruction from the page, handed to the daemon's control
 * target exactly as an authenticated WebSocket command is (the same command
 * Event the CLI builds, checked as the socket checks it, routed by
 * `routeCommand`), then its ack awaited in-process (ack-wait.ts). The answer
 * is the ack: `accepted`, or `rejected` with the nack reason (or the router's
 * refusal code) and, for a switch left off, the hint the CLI prints.
 */
import { ackHint, type ControlCommand } from '../control-cli/hints.js';
import { instructCommand, respondCommand, type CommandEvent } from '../control-cli/command-event.js';
import type { Ack } from '../control-cli/ack.js';
import { errorBody, type ErrorBody } from '../core/errors.js';
import { checkEnvelope } from '../stream/envelope-check.js';
import { ClaimRegistry } from '../stream/socket/claims.js';
import { routeCommand } from '../stream/socket/commands.js';
import { ACK_WAIT_MS, awaitAck } from './ack-wait.js';
import type { CommandBody } from './command-body.js';
import type { UiDeps } from './deps.js';

/** The sender the page's commands name (`agent`, and in `source`): the history says the answer came from the live view. */
export const UI_AGENT = 'hermes-aep-ui';

export interface CommandAnswer {
  readonly outcome: 'accepted' | 'rejected';
  readonly reason?: string;
  readonly detail?: string;
  readonly hint?: string;
}

export type CommandReply = { readonly status: 200; readonly body: CommandAnswer } | { readonly status: number; readonly body: ErrorBody };

/** No connection claims a foreign session here: commands go to this daemon's own sessions only. */
const NO_CLAIMS = new ClaimRegistry();

function commandOf(body: CommandBody, host: string): { cmd: CommandEvent; kind: ControlCommand } {
  const ctx = { host, agent: UI_AGENT };
  if (body.action === 'instruct') return { cmd: instructCommand(body.session, body.text, ctx), kind: 'instruct' };
  const reason = body.reason?.trim() ? body.reason : undefined;
  return { cmd: respondCommand(body.card, body.session, { option: body.option, ...(reason !== undefined ? { text: reason } : {}) }, ctx), kind: 'answer' };
}

function answerOf(kind: ControlCommand, ack: Ack): CommandAnswer {
  const hint = ackHint(kind, ack);
  if (ack.kind === 'accepted') return { outcome: 'accepted' };
  const reason = ack.kind === 'rejected' ? ack.reason : ack.code;
  return { outcome: 'rejected', reason, ...(ack.detail !== undefined ? { detail: ack.detail } : {}), ...(hint !== undefined ? { hint } : {}) };
}

export async function runCommand(deps: UiDeps, body: CommandBody): Promise<CommandReply> {
  const { cmd, kind } = commandOf(body, deps.sourceHost);
  const checked = checkEnvelope(cmd.event, cmd.line, 'ingest');
  if (!checked.ok) return { status: 400, body: errorBody('invalid-command', `the command is not a valid AEP event (${checked.detail})`) };
  // subscribed before the command goes out: its ack cannot slip past
  const wait = awaitAck(deps.hub, cmd, deps.ackWaitMs ?? ACK_WAIT_MS);
  if ('refused' in wait) return { status: 429, body: errorBody('limit-exceeded', wait.refused) };
  let refusal: Ack | undefined;
  const routed = routeCommand(
    {
      access: { kind: 'authenticated' },
      role: 'consumer',
      hub: deps.hub,
      claims: NO_CLAIMS,
      // a refusal frame (no route, no target): answered as the CLI reads it, `refused: <code>`
      reply: (text) => {
        const f = JSON.parse(text) as { code?: unknown; detail?: unknown };
        refusal = {
          kind: 'refused',
          code: typeof f.code === 'string' ? f.code : 'error',
          ...(typeof f.detail === 'string' ? { detail: f.detail } : {}),
          line: text,
        };
      },
      // only a foreign session's command is persisted by the router; none is routed there from here
      persist: () => undefined,
      ...(deps.control ? { own: deps.control } : {}),
    },
    checked.wire,
    cmd.line,
  );
  if (!routed.routed) {
    wait.cancel();
    return { status: 200, body: answerOf(kind, refusal ?? { kind: 'refused', code: routed.code, line: '' }) };
  }
  const got = await wait.result;
  if (got.kind === 'ack') return { status: 200, body: answerOf(kind, got.ack) };
  if (got.kind === 'stopping') return { status: 503, body: errorBody('stopping') };
  deps.log.warn('a live-view command got no ack within the ack window', { type: cmd.type });
  return { status: 504, body: errorBody('no-ack') };
}
