import { z } from 'zod';
import { ConfigError, int, readEnv, setting } from '../config/read-env.js';

/**
 * The two opt-in gates at install time, and the per-hook `timeout:` they need.
 *
 * `--control` (or AEP_HERMES_CONTROL in the install's environment): the shim holds a `pre_tool_call` until the daemon
 * answers, at most the daemon's window (AEP_ATTENTION_TIMEOUT_MS, 55000) + 3 s. `--instruct` (or AEP_INSTRUCT): a
 * `pre_llm_call` context reply reaches Hermes. Both are written into the registered command (`--control
 * --attention-timeout-ms MS`, `--instruct`), so the gate reaches the shim whatever environment Hermes runs in, and
 * the hold the command asks for is the one the `timeout:` below was computed for: a window set later in Hermes's
 * environment cannot outgrow it. With neither, the command and the timeouts are exactly what they were before.
 *
 * The invariant install writes and checks: Hermes's `timeout:` for `pre_tool_call` > the shim's hold deadline >
 * the daemon's hold window. Hermes kills a hook at its `timeout:` (clamped to 300 s), so a combination where it
 * would kill the shim before the daemon answers is refused.
 */

export const DEFAULT_TIMEOUT_S = 10;
export const HERMES_MAX_TIMEOUT_S = 300;
const DEFAULT_ATTENTION_MS = 55_000;
/** the shim waits this much longer than the daemon's window (src/shim/hook.cts) */
const HOLD_MARGIN_MS = 3_000;
/** and Hermes waits at least this much longer than the shim */
const KILL_MARGIN_S = 2;

export interface GateOptions {
  /** `--control`: undefined reads AEP_HERMES_CONTROL */
  readonly control?: boolean | undefined;
  /** `--instruct`: undefined reads AEP_INSTRUCT */
  readonly instruct?: boolean | undefined;
}

export interface InstallGates {
  readonly control: boolean;
  readonly instruct: boolean;
  /** the daemon's hold window the shim plans for (ms) */
  readonly attentionMs: number;
  /** how long the shim waits for a held pre_tool_call (ms) */
  readonly holdMs: number;
  /** the shim's arguments for the gates, after the target's */
  readonly args: string[];
  /** one line for the install report */
  readonly summary: string;
}

export class GateError extends Error {
  override readonly name = 'GateError';
}

const onOff = setting('1, true, yes, on (the gate on) or 0, false, no, off (any case)', (raw) => {
  const v = raw.trim().toLowerCase();
  return ['1', 'true', 'yes', 'on'].includes(v) ? true : ['0', 'false', 'no', 'off'].includes(v) ? false : undefined;
});

const gateSettings = z.looseObject({
  AEP_HERMES_CONTROL: onOff.optional(),
  AEP_INSTRUCT: onOff.optional(),
  AEP_ATTENTION_TIMEOUT_MS: int(1).optional(),
});

function readGateEnv(env: NodeJS.ProcessEnv): z.output<typeof gateSettings> {
  try {
    return readEnv(gateSettings, env);
  } catch (err) {
    if (err instanceof ConfigError) throw new GateError(`${err.message} (install writes the gates into the registered command from them)`);
    throw err;
  }
}

export function resolveGates(opts: GateOptions, env: NodeJS.ProcessEnv = process.env): InstallGates {
  const e = readGateEnv(env);
  const control = opts.control ?? e.AEP_HERMES_CONTROL ?? false;
  const instruct = opts.instruct ?? e.AEP_INSTRUCT ?? false;
  const attentionMs = e.AEP_ATTENTION_TIMEOUT_MS ?? DEFAULT_ATTENTION_MS;
  const holdMs = attentionMs + HOLD_MARGIN_MS;
  const args = [...(control ? ['--control', '--attention-timeout-ms', String(attentionMs)] : []), ...(instruct ? ['--instruct'] : [])];
  const on = [
    ...(control ? [`control (a pre_tool_call waits up to ${holdMs} ms for the operator: AEP_ATTENTION_TIMEOUT_MS ${attentionMs} + 3000)`] : []),
    ...(instruct ? ['instruct (a pre_llm_call reply may add context)'] : []),
  ];
  return { control, instruct, attentionMs, holdMs, args, summary: on.length ? on.join('; ') : 'off (observe only)' };
}

/** The report's reminder: the daemon reads its own switches. */
export function daemonNote(g: InstallGates): string[] {
  const vars = [...(g.control ? ['AEP_HERMES_CONTROL=1'] : []), ...(g.instruct ? ['AEP_INSTRUCT=1'] : [])];
  return vars.length ? [`    (the daemon holds and steers only with ${vars.join(' and ')} in its own environment too)`] : [];
}

/** The least `timeout:` (s) Hermes may give a held pre_tool_call: the shim's deadline rounded up, plus a margin. */
export function neededTimeout(g: InstallGates): number {
  return Math.ceil(g.holdMs / 1000) + KILL_MARGIN_S;
}

/**
 * The `timeout:` of every hook (`timeout`) and the hooks that differ (`timeouts`), or a refusal naming the fix.
 * `explicit`: `--timeout` as given (applies to every hook); without it every hook keeps the default 10 s and, under
 * the control gate, `pre_tool_call` gets what its hold needs. `pre_llm_call` under instruct does not hold: the shim
 * answers it within AEP_SHIM_TIMEOUT_MS (5 s), under every timeout install accepts, so it keeps the others' timeout.
 */
export function hookTimeouts(g: InstallGates, explicit: number | undefined): { timeout: number; timeouts: Record<string, number> } {
  const timeout = explicit ?? DEFAULT_TIMEOUT_S;
  if (!g.control) return { timeout, timeouts: {} };
  const need = neededTimeout(g);
  if (need > HERMES_MAX_TIMEOUT_S)
    throw new GateError(
      `--control: AEP_ATTENTION_TIMEOUT_MS=${g.attentionMs} needs a pre_tool_call timeout of ${need} s, above the ${HERMES_MAX_TIMEOUT_S} s Hermes clamps it to, so Hermes would kill the shim before the daemon answers; use an AEP_ATTENTION_TIMEOUT_MS of at most ${(HERMES_MAX_TIMEOUT_S - KILL_MARGIN_S) * 1000 - HOLD_MARGIN_MS}`,
    );
  if (explicit !== undefined && explicit < need)
    throw new GateError(
      `--timeout ${explicit} is below the ${need} s a held pre_tool_call needs (the shim waits AEP_ATTENTION_TIMEOUT_MS ${g.attentionMs} + 3 s, and Hermes must wait longer), so Hermes would kill the shim before the daemon answers; give --timeout ${need} or more, or leave it out`,
    );
  const pre = Math.max(need, timeout);
  return { timeout, timeouts: pre === timeout ? {} : { pre_tool_call: pre } };
}
