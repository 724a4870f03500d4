/**
 * Secret detection for identifier-shaped values (a model, provider, platform,
 * tool name, call or session id, subagent role or status, approval pattern
 * key): the same detection content gets (rule (a) of the §9.4 pipeline: the
 * secretlint recommended preset and the pipeline's own shapes; rule (b): the
 * operator's configured secret values and names), before any of them can
 * reach an egress. Home paths and PII (rules c, d) are privacy rules for
 * text, not secrets, and are not applied to identifiers.
 *
 * A value in which anything is detected is replaced WHOLE by a stand-in,
 * `redacted-<16 hex of its SHA-256>`: identifier-shaped itself (it passes every
 * identifier check downstream), stable (the same model always maps to the same
 * stand-in, so it groups together in traces and metrics, and keys built from
 * it still pair), and carrying no part of the secret. Whole, not in part: a
 * partial replacement would keep whatever the detector's range did not cover.
 *
 * Identifiers join words with `-`/`_`, which the content JWT rule takes as
 * part of a token (`leaf-eyJ…` is one run to it); here a JWT is also found
 * right after one of them.
 *
 * Cost: the full detector costs tens of microseconds on even a short string;
 * identifiers repeat (the same model, tool, session on every hook), so a
 * verdict of "clean" is remembered per operator configuration (bounded,
 * most recent kept). Only clean values are remembered: no secret is kept
 * in memory past the hook that carried it.
 */
import { createHash } from 'node:crypto';
import { RecencyMap } from '../util/recency-map.js';
import { redactSecretNames, redactSecretValues } from './operator-rules.js';
import { redactSecretShapes } from './secret-shapes.js';
import type { RedactOptions } from './redact.js';

/** What a value with a detected secret becomes, before its digest. */
export const IDENTIFIER_STAND_IN_PREFIX = 'redacted-';

/** The content JWT rule's shape; the view it reads puts a boundary between a `-`/`_` and a following `eyJ`. */
const JWT_RE = /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\./;
const JOINED_JWT_START_RE = /[-_](?=eyJ)/g;

/**
 * Whether the full detector finds a secret in `text`: one pass of rules (a)
 * and (b) changes it, or a JWT follows an identifier's joiner.
 */
export function identifierHasSecret(text: string, opts: RedactOptions = {}): boolean {
  if (redactSecretShapes(text) !== text) return true;
  if (redactSecretValues(text, opts.secretValues) !== text) return true;
  if (redactSecretNames(text, opts.secretNames) !== text) return true;
  return text.includes('eyJ') && JWT_RE.test(text.replace(JOINED_JWT_START_RE, ' '));
}

/** The stand-in for a value with a secret: stable, identifier-shaped, none of the value in it. */
export function identifierStandIn(value: string): string {
  return IDENTIFIER_STAND_IN_PREFIX + createHash('sha256').update(value, 'utf8').digest('hex').slice(0, 16);
}

/** How many clean verdicts are remembered per operator configuration. */
export const CLEAN_CACHE_SIZE = 4096;
/** Longer values are checked every time (identifiers are short; memory stays bounded). */
const CACHED_MAX_LENGTH = 256;

/** Clean values by operator configuration: a configured secret value makes a different verdict. */
const cleanByOptions = new WeakMap<RedactOptions, RecencyMap<string, true>>();
const NO_OPTIONS: RedactOptions = {};

/**
 * An identifier-shaped value as it may leave: itself when no secret is found
 * in it, else its stand-in. Same verdict as `identifierHasSecret`, always
 * (a remembered clean verdict is that function's own answer).
 */
export function safeIdentifier(value: string, opts: RedactOptions = NO_OPTIONS): string {
  let clean = cleanByOptions.get(opts);
  if (clean?.has(value)) return value;
  if (identifierHasSecret(value, opts)) return identifierStandIn(value);
  if (value.length > CACHED_MAX_LENGTH) return value;
  if (clean === undefined) {
    clean = new RecencyMap<string, true>(CLEAN_CACHE_SIZE);
    cleanByOptions.set(opts, clean);
  }
  clean.set(value, true);
  return value;
}
