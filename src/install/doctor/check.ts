/**
 * One finding of `hermes-aep doctor`: printed as `ok|warn|FAIL  <what>: <finding>`, and when not ok a second,
 * indented line `fix: <the command or setting>`. Pure: the checks decide, run.ts prints.
 */
export type Level = 'ok' | 'warn' | 'fail';

export interface Check {
  readonly level: Level;
  readonly what: string;
  readonly finding: string;
  /** the exact command or setting that fixes it (not ok only) */
  readonly fix?: string;
  /** further lines under the finding (the Hermes hook list's details) */
  readonly details?: readonly string[];
}

export const ok = (what: string, finding: string, details?: readonly string[]): Check => ({ level: 'ok', what, finding, ...(details ? { details } : {}) });
export const warn = (what: string, finding: string, fix: string): Check => ({ level: 'warn', what, finding, fix });
export const fail = (what: string, finding: string, fix: string): Check => ({ level: 'fail', what, finding, fix });

const LABEL: Record<Level, string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' };

export function formatCheck(c: Check): string[] {
  return [`${LABEL[c.level]}  ${c.what}: ${c.finding}`, ...(c.details ?? []).map((d) => `      ${d}`), ...(c.fix ? [`      fix: ${c.fix}`] : [])];
}

/** 0: every check ok or warn; 1: any FAIL. (2 is doctor itself failing: the CLI's.) */
export function exitStatus(checks: readonly Check[]): 0 | 1 {
  return checks.some((c) => c.level === 'fail') ? 1 : 0;
}
