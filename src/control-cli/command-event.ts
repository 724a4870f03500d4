/**
 * The command Events this CLI sends (AEP-0001 §5, AEP-0004 §2): a fresh ULID
 * `id` (the idempotency key: a retry resends these very bytes), `agent` the
 * sender (this CLI), `session` the target, no `seq` (the sender does not own
 * the target session's order), `severity: notice`, and a `capture` claim of
 * `full` when the command carries operator text, else `metadata`.
 */
import { ulid } from 'ulid';

/** The sender identity of every command (AEP-0004 §2.2: `agent` names the sender). */
export const CLI_AGENT = 'hermes-aep-cli';

export const RESPOND_TYPE = 'control.attention.respond';
export const INSTRUCT_TYPE = 'x.hermes.control.instruct';

export interface CommandEvent {
  readonly id: string;
  readonly type: string;
  readonly session: string;
  /** the envelope, as sent */
  readonly event: Readonly<Record<string, unknown>>;
  /** its one-line JSON: the exact text of every delivery */
  readonly line: string;
}

export interface CommandContext {
  /** the host part of `source` (a URI authority: AEP_SOURCE_HOST or the sanitized host name) */
  readonly host: string;
  /** the sender (`agent`, and the agent part of `source`): this CLI unless another sender builds the same command (the live view) */
  readonly agent?: string;
  readonly newId?: () => string;
  readonly now?: () => Date;
}

interface CommandSpec {
  readonly type: string;
  readonly session: string;
  readonly subject?: string;
  readonly cause?: string;
  readonly capture: 'metadata' | 'full';
  readonly data: Readonly<Record<string, unknown>>;
}

function build(spec: CommandSpec, ctx: CommandContext): CommandEvent {
  const id = (ctx.newId ?? ulid)();
  const agent = ctx.agent ?? CLI_AGENT;
  const event = {
    aep: '0.1',
    id,
    type: spec.type,
    time: (ctx.now?.() ?? new Date()).toISOString(),
    source: `aep://${ctx.host}/agent/${agent}/session/${encodeURIComponent(spec.session)}`,
    agent,
    session: spec.session,
    ...(spec.subject !== undefined ? { subject: spec.subject } : {}),
    ...(spec.cause !== undefined ? { cause: spec.cause } : {}),
    severity: 'notice',
    capture: spec.capture,
    data: spec.data,
  };
  return { id, type: spec.type, session: spec.session, event, line: JSON.stringify(event) };
}

export interface Answer {
  readonly option: 'allow' | 'deny';
  readonly text?: string;
}

/** `control.attention.respond` (AEP-0004 §5): `subject` and `cause` name the card (the `attention.requested` id). */
export function respondCommand(card: string, session: string, answer: Answer, ctx: CommandContext): CommandEvent {
  return build(
    {
      type: RESPOND_TYPE,
      session,
      subject: card,
      cause: card,
      capture: answer.text !== undefined ? 'full' : 'metadata',
      data: { answer: { option: answer.option, ...(answer.text !== undefined ? { text: answer.text } : {}) } },
    },
    ctx,
  );
}

/** `x.hermes.control.instruct`: operator text for a session that accepts instructions (`AEP_INSTRUCT=1`). */
export function instructCommand(session: string, text: string, ctx: CommandContext): CommandEvent {
  return build({ type: INSTRUCT_TYPE, session, capture: 'full', data: { text } }, ctx);
}
