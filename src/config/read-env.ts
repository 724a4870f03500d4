import path from 'node:path';
import { z } from 'zod';

/** One bad setting: the variable and the rule (what it accepts, or why it cannot be used); never the value, which can be a secret. */
export interface ConfigProblem {
  readonly variable: string;
  readonly rule: string;
}

/** Every way the settings can stop the daemon, as one error naming each variable and what it accepts. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: readonly ConfigProblem[];

  constructor(problems: readonly ConfigProblem[]) {
    super(`invalid configuration: ${problems.map((p) => `${p.variable}: ${p.rule}`).join('; ')}`);
    this.problems = problems;
  }

  /** the variables named, in order */
  get variables(): string[] {
    return this.problems.map((p) => p.variable);
  }
}

/**
 * Parse the environment through a settings schema: a (loose) object keyed by
 * variable names whose `.transform()` builds the config object. Empty values
 * read as unset, so `AEP_PORT=` means the default, never 0. Every issue
 * becomes one problem named by its first path segment (the variable).
 */
export function readEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  const set = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''));
  const parsed = schema.safeParse(set);
  if (parsed.success) return parsed.data;
  const problems = new Map<string, string>();
  for (const issue of parsed.error.issues) {
    const variable = String(issue.path[0] ?? 'settings');
    if (!problems.has(variable)) problems.set(variable, issue.message);
  }
  throw new ConfigError([...problems].map(([variable, rule]) => ({ variable, rule })));
}

/** A custom issue on one variable, for rules that read several (inside an object schema's transform). */
export function reject(ctx: z.RefinementCtx, variable: string, rule: string): typeof z.NEVER {
  ctx.addIssue({ code: 'custom', path: [variable], message: rule });
  return z.NEVER;
}

/** One variable: `parse` returns the value, or undefined when the text is not one `accepted` describes. */
export function setting<T>(accepted: string, parse: (raw: string) => T | undefined) {
  return z.string().transform((raw, ctx): T => {
    const value = parse(raw);
    if (value === undefined) {
      ctx.addIssue({ code: 'custom', message: accepted });
      return z.NEVER;
    }
    return value;
  });
}

/** A whole number (decimal digits, surrounding blanks allowed) from min to max. */
export const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  setting(max === Number.MAX_SAFE_INTEGER ? `a whole number of ${min} or more` : `a whole number from ${min} to ${max}`, (raw) => {
    const n = /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
    return n >= min && n <= max ? n : undefined;
  });

/** A decimal number from min to max. */
export const decimal = (min: number, max: number) =>
  setting(`a number from ${min} to ${max}`, (raw) => {
    const n = raw.trim() === '' ? Number.NaN : Number(raw);
    return n >= min && n <= max ? n : undefined;
  });

/** Exactly one of `values`. */
export const oneOf = <const V extends string>(values: readonly V[], why = '') =>
  setting(`one of ${values.join(', ')}${why}`, (raw) => values.find((v) => v === raw));

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];
export const bool = setting(`one of ${[...TRUE, ...FALSE].join(', ')}`, (raw) => (TRUE.includes(raw) ? true : FALSE.includes(raw) ? false : undefined));

/** Comma-separated, blanks trimmed, empty items dropped; every item must pass `ok`. */
export const listOf = (accepted: string, ok: (item: string) => boolean) =>
  setting(`a comma-separated list of ${accepted}`, (raw) => {
    const items = raw
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
    return items.every(ok) ? items : undefined;
  });

/**
 * An absolute path. A relative one would resolve against whatever directory
 * the daemon was started in (and the shim, started by Hermes, has another);
 * `~` is expanded by shells only, never in a unit file or a compose file.
 */
const ABSOLUTE = 'an absolute path (`~` is not expanded)';
const absolute = (raw: string) => (path.isAbsolute(raw) ? path.resolve(raw) : undefined);
export const absolutePath = setting(ABSOLUTE, absolute);
/** An absolute path, or `off`. */
export const pathOrOff = setting(`${ABSOLUTE} or off`, (raw) => (raw === 'off' ? raw : absolute(raw)));

/** An http:// or https:// URL (kept as written). */
export const httpUrl = setting('an http:// or https:// URL', (raw) => {
  try {
    return ['http:', 'https:'].includes(new URL(raw).protocol) ? raw : undefined;
  } catch {
    return undefined;
  }
});

/** A ws:// or wss:// URL (kept as written): where the relay link connects. */
export const wsUrl = setting('a ws:// or wss:// URL', (raw) => {
  try {
    return ['ws:', 'wss:'].includes(new URL(raw).protocol) ? raw : undefined;
  } catch {
    return undefined;
  }
});
