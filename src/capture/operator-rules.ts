/**
 * Rules (b) and (c) of the §9.4 pipeline (`redact.ts`): secrets the operator
 * configured (literal values, and names whose assigned value is secret), and
 * home paths. The regexes built from the operator's configuration are kept in
 * small lru-caches (configurations rarely change).
 */

import { LRUCache } from 'lru-cache';
import { ASSIGNED_VALUE, ASSIGNMENT_SEPARATOR, escapeRegExp, NAME_START, SECRET_MARKER } from './patterns.js';
import { redactAssigned } from './secret-shapes.js';

/** Regexes kept per configuration. */
const CACHED_CONFIGURATIONS = 32;

// ---------------------------------------------------------------------------
// Rule (b): operator-configured secrets.

/** Existing markers, kept intact when literal secret values are replaced. */
const MARKER_SPLIT_RE = /(\[REDACTED:[a-z]+\])/;

export function redactSecretValues(text: string, values: readonly string[] | undefined): string {
  if (values === undefined || values.length === 0) return text;
  // Longest first, so a value that contains another is replaced whole.
  const sorted = [...new Set(values)].filter((v) => v.length > 0).sort((a, b) => b.length - a.length);
  if (sorted.length === 0) return text;
  // Replace only outside existing markers, so a configured value such as
  // "secret" cannot corrupt a marker and the pipeline stays idempotent.
  const parts = text.split(MARKER_SPLIT_RE);
  for (let i = 0; i < parts.length; i += 2) {
    let part = parts[i] ?? '';
    for (const v of sorted) {
      if (part.includes(v)) part = part.split(v).join(SECRET_MARKER);
    }
    parts[i] = part;
  }
  return parts.join('');
}

const NAME_RE_CACHE = new LRUCache<string, RegExp>({ max: CACHED_CONFIGURATIONS });

function secretNamesRegExp(names: readonly string[]): RegExp | undefined {
  const usable = [...new Set(names)].filter((n) => n.length > 0).sort((a, b) => b.length - a.length);
  if (usable.length === 0) return undefined;
  const key = usable.join('\u0000');
  const cached = NAME_RE_CACHE.get(key);
  if (cached !== undefined) return cached;
  const alternation = usable.map(escapeRegExp).join('|');
  const re = new RegExp(`(${NAME_START}(?:${alternation})${ASSIGNMENT_SEPARATOR})(${ASSIGNED_VALUE})`, 'gi');
  NAME_RE_CACHE.set(key, re);
  return re;
}

export function redactSecretNames(text: string, names: readonly string[] | undefined): string {
  if (names === undefined || names.length === 0) return text;
  const re = secretNamesRegExp(names);
  if (re === undefined) return text;
  return text.replace(re, (_m, prefix: string, value: string) => redactAssigned(prefix, value));
}

// ---------------------------------------------------------------------------
// Rule (c): home paths.

/** Characters that may not appear in the user segment of a home path. */
const USER_SEGMENT = String.raw`[^/\\\s"'\x60<>|:;,()[\]{}*?]+`;

/** Any POSIX user home (`/home/<user>`, `/Users/<user>`) or `/root`, as hardening beyond the operator's own home. */
const POSIX_HOME_RE = new RegExp(String.raw`(?<![A-Za-z0-9_.~-])(?:/(?:home|Users)/${USER_SEGMENT}|/root)(?=$|[/\s"'\x60<>|:;,()[\]{}])`, 'g');

/** Windows user profiles (`C:\Users\<user>`). */
const WINDOWS_HOME_RE = /(?<![A-Za-z0-9])[A-Za-z]:\\Users\\[^\\/\s"'<>|:;,()[\]{}*?]+/g;

const HOME_RE_CACHE = new LRUCache<string, RegExp>({ max: CACHED_CONFIGURATIONS });

function operatorHomeRegExp(home: string): RegExp | undefined {
  const trimmed = home.replace(/[/\\]+$/, '');
  // "/" or "" as a home would rewrite every path; such a home is ignored.
  if (trimmed.length < 2) return undefined;
  const cached = HOME_RE_CACHE.get(trimmed);
  if (cached !== undefined) return cached;
  const re = new RegExp(`(?<![A-Za-z0-9_.~-])${escapeRegExp(trimmed)}(?=$|[/\\\\\\s"'\`<>|:;,()[\\]{}])`, 'g');
  HOME_RE_CACHE.set(trimmed, re);
  return re;
}

export function redactHomePaths(text: string, home: string | undefined): string {
  let out = text;
  if (home !== undefined) {
    const re = operatorHomeRegExp(home);
    if (re !== undefined) out = out.replace(re, '~');
  }
  out = out.replace(POSIX_HOME_RE, '~');
  out = out.replace(WINDOWS_HOME_RE, '~');
  return out;
}
