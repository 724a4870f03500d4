import type { GateOptions } from './gates.js';
import type { ModelCallOptions } from './model-calls.js';
import type { TargetOptions } from './shim-target.js';

/** The options of `install` (the CLI and each transport's installer). */
export interface InstallOptions extends TargetOptions, GateOptions, ModelCallOptions {
  readonly dryRun: boolean;
  /** `--timeout` as given (every hook's `timeout:`); undefined: the default, and what a held pre_tool_call needs */
  readonly timeout?: number | undefined;
  readonly hermesHome?: string | undefined;
  /**
   * `shell`: the shim as a shell hook; `plugin`: the in-process forwarder (plugin/hermes-aep/); `webhook`: Hermes's
   * own outbound webhook to the daemon's POST /webhook (the gated hooks keep a shell hook). Undefined: chosen from the
   * installed Hermes and the target (transport-choice.ts)
   */
  readonly transport?: 'shell' | 'plugin' | 'webhook' | undefined;
  /** `--hermes`: where the installed Hermes is (the default transport is chosen from it; webhook checks it has outbound webhooks); default: as doctor finds it */
  readonly hermes?: string | undefined;
  /** set by runInstall when it chose the transport: the line saying which and why, printed in the report (never before a refusal) */
  readonly choiceLine?: string | undefined;
}

/** The report's line for a transport install chose (none when --transport was given). */
export function choiceLines(opts: InstallOptions): string[] {
  return opts.choiceLine === undefined ? [] : [`  ${opts.choiceLine}`];
}

/** The options of `uninstall`. */
export interface UninstallOptions {
  readonly dryRun: boolean;
  readonly hermesHome?: string | undefined;
}
