/**
 * What a person does about a command the daemon does not take: an
 * `unsupported` nack (or router refusal) of an answer or an instruction is
 * almost always a switch left off, so the line after it names the switch on
 * both sides (the daemon's environment, and the hook command `install`
 * registers, which must wait for the reply).
 */
import type { Ack } from './ack.js';

export type ControlCommand = 'answer' | 'instruct';

const SWITCH: Readonly<Record<ControlCommand, { readonly what: string; readonly env: string; readonly flag: string }>> = {
  answer: { what: 'takes no answers (its control gate is off)', env: 'AEP_HERMES_CONTROL=1', flag: '--control' },
  instruct: { what: 'takes no instructions (steering is off)', env: 'AEP_INSTRUCT=1', flag: '--instruct' },
};

/** The hint line for an ack, or undefined when the ack needs none. */
export function ackHint(cmd: ControlCommand, ack: Ack): string | undefined {
  const unsupported = (ack.kind === 'rejected' && ack.reason === 'unsupported') || (ack.kind === 'refused' && ack.code === 'unsupported');
  if (!unsupported) return undefined;
  const s = SWITCH[cmd];
  return `hermes-aep ${cmd}: the session's daemon ${s.what}: start it with ${s.env}, and install the hooks with \`hermes-aep install ${s.flag}\` (docs/control.md)`;
}
