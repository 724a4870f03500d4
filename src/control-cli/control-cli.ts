/**
 * `hermes-aep answer` and `hermes-aep instruct`, the process side: the
 * target (the daemon's Unix socket, which it treats as authenticated; or
 * TCP with the stream token, required), the card's session (looked up
 * unless `--session` names it), one command sent, one line printed.
 *
 * Exit status: 0 accepted; 1 rejected (the target's `control.rejected`) or
 * refused (a router's `error` frame); 2 a usage error, no connection, a card
 * not found, or no ack in time. Messages name targets and codes, never the
 * token and never event content.
 */
import os from 'node:os';
import { loadConfig } from '../config/config.js';
import type { StreamTarget } from '../tail/sse-client.js';
import { streamTarget, type TargetOptions } from '../tail/target.js';
import { ackText, outcomeText } from './ack.js';
import { ackHint, type ControlCommand } from './hints.js';
import { answerArgs, instructArgs, UsageError } from './args.js';
import { findCard } from './card-lookup.js';
import { CLI_AGENT, instructCommand, respondCommand, type CommandContext, type CommandEvent } from './command-event.js';
import { sendCommand, type SendOptions, type SendResult } from './send-command.js';
import type { LinkFailure } from './socket-link.js';
import { clean } from '../tail/facts.js';

export interface ControlCliOptions extends TargetOptions {
  readonly json?: boolean;
  /** answer only: the card's session (no lookup) */
  readonly session?: string;
}

export interface ControlIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

export interface ControlPlan {
  readonly target: StreamTarget;
  readonly json: boolean;
  readonly ctx: CommandContext;
  readonly instance: string;
}

/** Tests: a shorter grace, fewer deliveries, a shorter connect/subscribe step. */
export type ControlTuning = Pick<SendOptions, 'graceMs' | 'attempts'> & { readonly stepMs?: number };

/** The daemon a message names: its socket, or its TCP base (never the token, never a query). */
export function describeDaemon(t: StreamTarget): string {
  return t.kind === 'socket' ? `unix:${t.path}` : `${t.url.origin}${t.url.pathname.replace(/\/stream$/, '')}`;
}

export function planControl(o: ControlCliOptions, env: NodeJS.ProcessEnv = process.env): ControlPlan {
  const config = loadConfig(env);
  const target = streamTarget(o, config, false);
  // the Unix socket is trusted by the daemon; over TCP a command needs the token (AEP-0004 §4.1)
  if (target.kind === 'url' && target.token === undefined) {
    throw new UsageError(`a command over TCP (${describeDaemon(target)}) needs the stream token: set AEP_TOKEN (or pass --token)`);
  }
  return { target, json: o.json === true, ctx: { host: config.sourceHost }, instance: os.hostname() };
}

function failureText(f: LinkFailure, where: string): string {
  switch (f.kind) {
    case 'unreachable':
      return `cannot reach ${where} (${f.code})`;
    case 'http':
      return `${where} refused the connection (${f.status} ${f.error})${f.message ? `: ${f.message}` : ''}`;
    case 'refused':
      return `${where} refused the ${f.step} (${f.code})${f.detail !== undefined ? `: ${f.detail}` : ''}`;
    case 'dropped':
      return `the connection to ${where} dropped before the ack (tried twice)`;
    case 'timeout':
      return `${where} did not complete the ${f.step} in time`;
  }
}

/** Print what became of the command; the exit status. */
function report(cmd: ControlCommand, r: SendResult, plan: ControlPlan, io: ControlIo): number {
  const where = describeDaemon(plan.target);
  switch (r.kind) {
    case 'aborted':
      return 2;
    case 'failed':
      io.err(`hermes-aep ${cmd}: ${failureText(r.failure, where)}`);
      return 2;
    case 'no-ack':
      io.err(`hermes-aep ${cmd}: no ack within ${r.waitedMs} ms`);
      return 2;
    case 'ack':
      io.out(plan.json ? r.ack.line : ackText(r.ack));
      if (r.ack.kind !== 'accepted') {
        const hint = plan.json ? undefined : ackHint(cmd, r.ack);
        if (hint !== undefined) io.err(hint);
        return 1;
      }
      if (r.outcome !== undefined) io.out(plan.json ? r.outcome.line : outcomeText(r.outcome));
      return 0;
  }
}

async function deliver(
  cmd: ControlCommand,
  command: CommandEvent,
  card: string | undefined,
  plan: ControlPlan,
  io: ControlIo,
  signal: AbortSignal,
  t: ControlTuning,
) {
  const r = await sendCommand({
    target: plan.target,
    command,
    ...(card !== undefined ? { card } : {}),
    link: { agent: CLI_AGENT, instance: plan.instance, ...(t.stepMs !== undefined ? { stepMs: t.stepMs } : {}) },
    signal,
    ...(t.graceMs !== undefined ? { graceMs: t.graceMs } : {}),
    ...(t.attempts !== undefined ? { attempts: t.attempts } : {}),
  });
  const code = report(cmd, r, plan, io);
  if (r.kind === 'ack' && r.ack.kind === 'accepted' && card !== undefined && r.outcome === undefined) {
    io.err(`hermes-aep ${cmd}: no outcome seen yet (the card may still be pending)`);
  }
  return code;
}

export async function runAnswer(
  card: string,
  decision: string | undefined,
  reason: readonly string[],
  o: ControlCliOptions,
  plan: ControlPlan,
  io: ControlIo,
  signal: AbortSignal,
  t: ControlTuning = {},
): Promise<number> {
  const args = answerArgs(card, decision, reason);
  let session = o.session;
  if (session !== undefined && session === '') throw new UsageError('--session must not be empty');
  const named = clean(args.card, 40);
  if (session === undefined) {
    const found = await findCard(plan.target, args.card, signal, t.stepMs);
    if (found.kind === 'aborted') return 2;
    if (found.kind === 'unreachable' || found.kind === 'refused') {
      const why =
        found.kind === 'unreachable'
          ? `cannot reach ${describeDaemon(plan.target)} (${found.code})`
          : `${describeDaemon(plan.target)} refused the card lookup (${found.status} ${found.error})${found.message ? `: ${found.message}` : ''}`;
      io.err(`hermes-aep answer: ${why}`);
      return 2;
    }
    if (found.kind === 'missing') {
      io.err(`hermes-aep answer: no card ${named} among the events the daemon holds (pass --session if it is older)`);
      return 2;
    }
    const c = found.card;
    if (c.respondVia !== undefined && !c.respondVia.includes('control')) {
      io.err(`hermes-aep answer: card ${named} is observed only (its respond_via has no "control"): answer it where it was asked`);
      return 2;
    }
    if (c.options !== undefined && c.options.length > 0 && !c.options.includes(args.answer.option)) {
      io.err(`hermes-aep answer: card ${named} does not offer ${args.answer.option}`);
      return 2;
    }
    session = c.session;
  }
  return deliver('answer', respondCommand(args.card, session, args.answer, plan.ctx), args.card, plan, io, signal, t);
}

export async function runInstruct(session: string, words: readonly string[], plan: ControlPlan, io: ControlIo, signal: AbortSignal, t: ControlTuning = {}) {
  const args = instructArgs(session, words);
  return deliver('instruct', instructCommand(args.session, args.text, plan.ctx), undefined, plan, io, signal, t);
}

const stdio: ControlIo = {
  out: (line) => void process.stdout.write(`${line}\n`),
  err: (line) => void process.stderr.write(`${line}\n`),
};

/** Run one of the two commands as the process: Ctrl-C stops the wait; a bad command line or setting exits 2. */
async function asProcess(cmd: string, run: (plan: ControlPlan, signal: AbortSignal) => Promise<number>, o: ControlCliOptions): Promise<void> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    process.exitCode = await run(planControl(o, process.env), stop.signal);
  } catch (err) {
    // a usage error, a bad setting (it names the variable, never the value)
    process.stderr.write(`hermes-aep ${cmd}: ${(err as Error).message}\n`);
    process.exitCode = 2;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

export function runAnswerCli(card: string, decision: string, reason: readonly string[], o: ControlCliOptions): Promise<void> {
  return asProcess('answer', (plan, signal) => runAnswer(card, decision, reason, o, plan, stdio, signal), o);
}

export function runInstructCli(session: string, words: readonly string[], o: ControlCliOptions): Promise<void> {
  return asProcess('instruct', (plan, signal) => runInstruct(session, words, plan, stdio, signal), o);
}
