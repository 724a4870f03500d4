/**
 * The AEP-0003 §9.4 redaction pipeline for `redacted`-gated free text:
 * (a) secrets/credentials, (b) operator-configured secrets, (c) home paths,
 * (d) PII, applied in that order. The normative list is a floor; this module
 * redacts more (token shapes, quoted assignments, any user's home), as the
 * spec allows.
 *
 * Rule (a) is three layers, each on the text as the pass received it:
 * 1. the maintained ruleset: every scanner rule of the secretlint recommended
 *    preset (`secretlint.ts`), first, while the context its rules key on is intact;
 * 2. the pipeline's own shapes (`secret-shapes.ts`): the §9.4 floor (PEM, AKIA,
 *    Bearer, named assignments, JWT) and its hardening (token prefixes, URL credentials);
 * 3. credentials typed on a command line (`command-credentials.ts`).
 *
 * Rules (b) and (c) are in `operator-rules.ts`, rule (d) in `pii.ts`.
 *
 * Every pattern is compiled once at module load and written so that a failed
 * match attempt scans a bounded or run-anchored span: unbounded classes only
 * start at a run boundary (a lookbehind) or after a literal prefix, and no
 * quantified group can split the same input two ways, so the pipeline stays
 * linear in the input size.
 */

import { ENV_CREDENTIAL_NAME_RE } from './command-credentials.js';
import { redactHomePaths, redactSecretNames, redactSecretValues } from './operator-rules.js';
import { SECRET_MARKER } from './patterns.js';
import { redactPii } from './pii.js';
import { redactSecretShapes } from './secret-shapes.js';

export { PII_MARKER, SECRET_MARKER } from './patterns.js';

/** Operator configuration for the pipeline; every member is optional. */
export type RedactOptions = {
  /** The operator's home directory, replaced by `~` (rule c). */
  home?: string;
  /** Literal secret values the operator configured (rule b). */
  secretValues?: readonly string[];
  /** Env-var / config-key names whose assigned values are secret (rule b). */
  secretNames?: readonly string[];
  /** PII redaction (rule d); on unless explicitly `false`. */
  pii?: boolean;
};

/**
 * Upper bound on pipeline passes. A replacement can expose a neighbour that a
 * boundary check hid on the previous pass (`4567sk-…` once the phone number
 * is a marker), so the pipeline repeats until nothing changes; every changing
 * pass strictly shrinks the unredacted text, and the cap keeps it linear.
 */
const MAX_PASSES = 4;

/**
 * Run free text through the §9.4 pipeline in order (secrets, configured
 * secrets, home paths, PII), repeated to a fixed point so the result is
 * idempotent: redacting already-redacted text changes nothing.
 */
export function redactText(text: string, opts: RedactOptions = {}): string {
  let out = text;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const next = redactOnce(out, opts);
    if (next === out) break;
    out = next;
  }
  return out;
}

function redactOnce(text: string, opts: RedactOptions): string {
  let out = redactSecretShapes(text);
  out = redactSecretValues(out, opts.secretValues);
  out = redactSecretNames(out, opts.secretNames);
  out = redactHomePaths(out, opts.home);
  if (opts.pii !== false) out = redactPii(out);
  return out;
}

/** Credential words a normalized key may end with. */
const CREDENTIAL_KEY_SUFFIXES: readonly string[] = [
  'token',
  'password',
  'passwd',
  'passphrase',
  'secret',
  'apikey',
  'accesskey',
  'privatekey',
  'secretkey',
  'signingkey',
  'encryptionkey',
  'masterkey',
  'sessionkey',
  'credential',
  'credentials',
  'authorization',
  'auth',
  'cookie',
];

/**
 * Whether an object key names a credential (`token`, `API_KEY`,
 * `client_secret`, `Set-Cookie`, …): case-insensitive, ignoring `_`, `-`, `.`
 * and spaces, matched at the end of the name so `max_tokens` is not one.
 */
export function isCredentialKey(key: string): boolean {
  const normalized = key.toLowerCase().replace(/[\s_.-]+/g, '');
  return CREDENTIAL_KEY_SUFFIXES.some((suffix) => normalized.endsWith(suffix)) || ENV_CREDENTIAL_NAME_RE.test(key);
}

function redactValueInner(value: unknown, opts: RedactOptions, seen: Map<object, unknown>): unknown {
  if (typeof value === 'string') return redactText(value, opts);
  if (value === null || typeof value !== 'object') return value;
  const prior = seen.get(value);
  if (prior !== undefined) return prior;
  if (Array.isArray(value)) {
    const copy: unknown[] = [];
    seen.set(value, copy);
    for (const item of value) copy.push(redactValueInner(item, opts, seen));
    return copy;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const copy: Record<string, unknown> = {};
  seen.set(value, copy);
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    const redacted = isCredentialKey(key) ? SECRET_MARKER : redactValueInner(member, opts, seen);
    // defineProperty keeps a `__proto__` member an own property instead of a prototype swap.
    Object.defineProperty(copy, key, { value: redacted, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/**
 * Deep-copy a JSON-like value with every string run through `redactText` and
 * every value under a credential-named key replaced by the secret marker
 * whatever its shape (keys are structural and kept). Numbers, booleans and
 * null pass untouched.
 */
export function redactValue(value: unknown, opts: RedactOptions = {}): unknown {
  return redactValueInner(value, opts, new Map());
}
