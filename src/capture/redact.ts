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
 * 2. this module's own shapes: the §9.4 floor (PEM, AKIA, Bearer, named
 *    assignments, JWT) and its hardening (token prefixes, URL credentials);
 * 3. credentials typed on a command line (`command-credentials.ts`).
 *
 * Every pattern is compiled once at module load and written so that a failed
 * match attempt scans a bounded or run-anchored span: unbounded classes only
 * start at a run boundary (a lookbehind) or after a literal prefix, and no
 * quantified group can split the same input two ways, so the pipeline stays
 * linear in the input size.
 */

import { commandCredentialRanges, ENV_CREDENTIAL_NAME_RE, type Range } from './command-credentials.js';
import { ASSIGNED_VALUE, ASSIGNMENT_SEPARATOR, NAME_START, openingQuote } from './patterns.js';
import { scanWithSecretlint } from './secretlint.js';

/** Marker that replaces a secret or credential (rules a and b). */
export const SECRET_MARKER = '[REDACTED:secret]';

/** Marker that replaces an email address or phone number (rule d). */
export const PII_MARKER = '[REDACTED:pii]';

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

// ---------------------------------------------------------------------------
// Rule (a): secrets and credentials.

/**
 * PEM armour. An unterminated block redacts to the end of the input: a key
 * without its END line is still a key, and consuming the rest keeps the lazy
 * scan from being retried at every later BEGIN.
 */
const PEM_RE = /-----BEGIN [A-Z0-9 ]{1,64}-----[\s\S]*?(?:-----END [A-Z0-9 ]{1,64}-----|$)/g;

/** AWS access key ids (the §9.4 floor names AKIA; the other prefixes are siblings). */
const AWS_KEY_RE = /(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|A3T[0-9A-Z])[0-9A-Z]{16,}/g;

/**
 * Well-known bare token shapes that need no `key=` context. Each starts with a
 * literal prefix and a single character class, so a failed attempt costs at
 * most the class's minimum length. Only the generic-looking prefixes (`sk-`,
 * `sk_live_`) require a non-alphanumeric character before them, so words like
 * `task-…` or `disk-…` are not taken for keys.
 */
const TOKEN_SHAPE_RES: readonly RegExp[] = [
  /gh[pousr]_[A-Za-z0-9]{20,}/g, // GitHub classic/OAuth/app tokens
  /github_pat_[A-Za-z0-9_]{20,}/g, // GitHub fine-grained PAT
  /glpat-[A-Za-z0-9_-]{20,}/g, // GitLab PAT
  /gl(?:dt|rt|ptt|cbt|oas)-[A-Za-z0-9_-]{20,}/g, // other GitLab tokens
  /xox[abposre]-[A-Za-z0-9-]{10,}/g, // Slack tokens
  /xapp-[A-Za-z0-9-]{10,}/g, // Slack app-level tokens
  /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}/g, // OpenAI / Anthropic style keys
  /(?<![A-Za-z0-9])[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}/g, // Stripe keys
  /AIza[0-9A-Za-z_-]{30,}/g, // Google API keys
  /ya29\.[0-9A-Za-z_-]{20,}/g, // Google OAuth access tokens
  /npm_[A-Za-z0-9]{30,}/g, // npm tokens
  /hf_[A-Za-z0-9]{30,}/g, // Hugging Face tokens
  /pypi-[A-Za-z0-9_-]{50,}/g, // PyPI upload tokens
];

/**
 * JWT-shaped strings (`eyJ…`.`…`.`…`). The lookbehind restricts attempts to
 * the start of a base64url run, so a long run without dots is scanned once.
 */
const JWT_RE = /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

/** Canonical `Bearer ` scheme: the §9.4 floor redacts whatever token follows. */
const BEARER_CANONICAL_RE = /(Bearer[ \t]+)[A-Za-z0-9\-._~+/]+=*/g;

/**
 * Any-case `bearer` (RFC 6750 schemes are case-insensitive), but only before a
 * token-looking word (a digit or token punctuation, or 16+ letters), so prose
 * like "the bearer of good news" survives.
 */
const BEARER_ANYCASE_RE = /(bearer[ \t]+)(?=[A-Za-z0-9\-._~+/]*[0-9\-._~+/]|[A-Za-z]{16})[A-Za-z0-9\-._~+/]+=*/gi;

/** Credentials embedded in URLs (`scheme://user:password@host`). */
const URL_CREDENTIALS_RE = /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/\s:@]*:)[^/\s@]+@/g;

/**
 * Names whose assigned value is a credential, matched at the end of an
 * identifier (`GITHUB_TOKEN=`, `"api_key":`, `password :`), so counters such as
 * `max_tokens: 100` are not mistaken for credentials.
 */
const CREDENTIAL_NAME =
  '(?:pass(?:word|wd|phrase)|secret|token|api[_.-]?key|apikey|' +
  '(?:access|private|secret|signing|encryption|master|session)[_.-]?key|' +
  'credentials?|authorization|auth|cookie)';

/** An optional HTTP auth scheme kept readable in front of the redacted value. */
const AUTH_SCHEME = String.raw`(?:(?:bearer|basic|digest|token|negotiate|bot)[ \t]+)?`;

/** `name = value`, `name: value`, `"name": "value"`, value possibly on the next line. */
const CREDENTIAL_ASSIGNMENT_RE = new RegExp(`(${CREDENTIAL_NAME}${ASSIGNMENT_SEPARATOR}${AUTH_SCHEME})(${ASSIGNED_VALUE})`, 'gi');

/** Closing quotes/brackets/separators only: never secret material. */
const TRAILING_PUNCTUATION_RE = /^["'`)\]},;]*$/;

/** Replace a matched assigned value, keeping its quotes so JSON stays JSON. */
function redactAssigned(prefix: string, value: string): string {
  const quote = openingQuote(value);
  if (quote === '') {
    // A value an earlier rule already replaced may have swallowed closing
    // punctuation (`'Bearer x'`); punctuation alone cannot be secret, keep it.
    if (value.startsWith(SECRET_MARKER) && TRAILING_PUNCTUATION_RE.test(value.slice(SECRET_MARKER.length))) {
      return prefix + value;
    }
    return prefix + SECRET_MARKER;
  }
  const closed = value.length > quote.length && value.endsWith(quote);
  return prefix + quote + SECRET_MARKER + (closed ? quote : '');
}

/** Replace ranges of `text` by the secret marker: sorted, overlapping and touching ranges merged. */
function replaceRanges(text: string, ranges: readonly Range[]): string {
  if (ranges.length === 0) return text;
  const sorted = [...ranges].filter(([s, e]) => e > s).sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let out = '';
  let at = 0;
  let cur: [number, number] | undefined;
  for (const [s, e] of sorted) {
    if (cur !== undefined && s <= cur[1]) {
      cur[1] = Math.max(cur[1], e);
      continue;
    }
    if (cur !== undefined) {
      out += text.slice(at, cur[0]) + SECRET_MARKER;
      at = cur[1];
    }
    cur = [s, e];
  }
  if (cur !== undefined) out += text.slice(at, cur[0]) + SECRET_MARKER;
  return out + text.slice(cur === undefined ? at : cur[1]);
}

/** Characters a token can continue with (base64, base64url, URL-safe punctuation). */
const TOKEN_CHAR_RE = /[A-Za-z0-9+/=_\-.~%]/;

/**
 * Rules of the preset that report a whole URL for the password in its
 * userinfo. Where the pipeline's own URL rule finds that password in the
 * reported URL, it replaces the password alone and keeps the rest readable
 * (`postgres://app:[REDACTED:secret]@db:5432/x`), so the report is left to it.
 * Any other report is replaced whole (npm's `TOKEN:x-oauth-basic@github.com`
 * puts the secret in the user part, where the URL rule would miss it).
 */
const URL_PASSWORD_RULES: ReadonlySet<string> = new Set(['basicauth', 'database-connection-string']);

/** The URL rule's shape, unanchored, to test one reported URL. */
const URL_PASSWORD_RE = new RegExp(URL_CREDENTIALS_RE.source);

/**
 * Replace what the secretlint preset reports, on the text as this pass
 * received it (before the pipeline's own rules rewrite any context a rule
 * keys on). A report is widened to the end of the token it reaches into: a
 * rule may report fewer characters than the secret (the pinned preset's AWS
 * secret-access-key and npm x-oauth rules report the match's start with the
 * captured secret's length). A rule that threw or went asynchronous fails
 * closed: the whole string is a secret.
 */
function redactSecretlintFindings(text: string): string {
  const found = scanWithSecretlint(text);
  if (found.failed) return SECRET_MARKER;
  const ranges: Range[] = [];
  for (const { rule, range } of found.reports) {
    const start = Math.max(0, Math.min(range[0], text.length));
    let end = Math.min(Math.max(range[1], start), text.length);
    while (end < text.length && TOKEN_CHAR_RE.test(text[end]!)) end++;
    if (URL_PASSWORD_RULES.has(rule) && URL_PASSWORD_RE.test(text.slice(start, end))) continue;
    ranges.push([start, end]);
  }
  return replaceRanges(text, ranges);
}

function redactSecretShapes(text: string): string {
  let out = redactSecretlintFindings(text);
  out = out.replace(PEM_RE, SECRET_MARKER);
  out = out.replace(AWS_KEY_RE, SECRET_MARKER);
  for (const re of TOKEN_SHAPE_RES) out = out.replace(re, SECRET_MARKER);
  out = out.replace(JWT_RE, SECRET_MARKER);
  out = out.replace(BEARER_CANONICAL_RE, (_m, scheme: string) => scheme + SECRET_MARKER);
  out = out.replace(BEARER_ANYCASE_RE, (_m, scheme: string) => scheme + SECRET_MARKER);
  out = out.replace(URL_CREDENTIALS_RE, (_m, head: string) => `${head}${SECRET_MARKER}@`);
  out = out.replace(CREDENTIAL_ASSIGNMENT_RE, (_m, prefix: string, value: string) => redactAssigned(prefix, value));
  return replaceRanges(out, commandCredentialRanges(out));
}

// ---------------------------------------------------------------------------
// Rule (b): operator-configured secrets.

/** Existing markers, kept intact when literal secret values are replaced. */
const MARKER_SPLIT_RE = /(\[REDACTED:[a-z]+\])/;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function redactSecretValues(text: string, values: readonly string[] | undefined): string {
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

/** Bounded cache of per-configuration regexes (configurations rarely change). */
const NAME_RE_CACHE = new Map<string, RegExp>();
const NAME_RE_CACHE_LIMIT = 32;

function secretNamesRegExp(names: readonly string[]): RegExp | undefined {
  const usable = [...new Set(names)].filter((n) => n.length > 0).sort((a, b) => b.length - a.length);
  if (usable.length === 0) return undefined;
  const key = usable.join('\u0000');
  const cached = NAME_RE_CACHE.get(key);
  if (cached !== undefined) return cached;
  const alternation = usable.map(escapeRegExp).join('|');
  const re = new RegExp(`(${NAME_START}(?:${alternation})${ASSIGNMENT_SEPARATOR})(${ASSIGNED_VALUE})`, 'gi');
  if (NAME_RE_CACHE.size >= NAME_RE_CACHE_LIMIT) {
    const oldest = NAME_RE_CACHE.keys().next();
    if (oldest.done !== true) NAME_RE_CACHE.delete(oldest.value);
  }
  NAME_RE_CACHE.set(key, re);
  return re;
}

function redactSecretNames(text: string, names: readonly string[] | undefined): string {
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

const HOME_RE_CACHE = new Map<string, RegExp>();

function operatorHomeRegExp(home: string): RegExp | undefined {
  const trimmed = home.replace(/[/\\]+$/, '');
  // "/" or "" as a home would rewrite every path; such a home is ignored.
  if (trimmed.length < 2) return undefined;
  const cached = HOME_RE_CACHE.get(trimmed);
  if (cached !== undefined) return cached;
  const re = new RegExp(`(?<![A-Za-z0-9_.~-])${escapeRegExp(trimmed)}(?=$|[/\\\\\\s"'\`<>|:;,()[\\]{}])`, 'g');
  if (HOME_RE_CACHE.size >= NAME_RE_CACHE_LIMIT) HOME_RE_CACHE.clear();
  HOME_RE_CACHE.set(trimmed, re);
  return re;
}

function redactHomePaths(text: string, home: string | undefined): string {
  let out = text;
  if (home !== undefined) {
    const re = operatorHomeRegExp(home);
    if (re !== undefined) out = out.replace(re, '~');
  }
  out = out.replace(POSIX_HOME_RE, '~');
  out = out.replace(WINDOWS_HOME_RE, '~');
  return out;
}

// ---------------------------------------------------------------------------
// Rule (d): PII.

/** One DNS label: alphanumeric at both ends, hyphens inside. */
const DNS_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';

/** Email addresses; the lookbehind anchors attempts at the start of a local-part run. */
const EMAIL_RE = new RegExp(`(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@${DNS_LABEL}(?:\\.${DNS_LABEL})*\\.[A-Za-z]{2,}(?![A-Za-z0-9-])`, 'g');

/**
 * International numbers (`+CC …`): a bounded number of digit groups, each
 * group's length bounded, so backtracking is constant per `+`.
 */
const INTL_PHONE_RE = /(?<![\w+])\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}(?!\d|[.-]\d)/g;

/**
 * North-American shaped numbers: `(555) 123-4567`, `555-123-4567`,
 * `555.123.4567`. Three groups of fixed width with a consistent separator, so
 * version strings (`22.11.0`) and dates never qualify.
 */
const NANP_PHONE_RE = /(?<![\w.+-])(?:\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}|\d{3}([ .-])\d{3}\1\d{4})(?![\w-]|\.\d)/g;

/** E.164 caps a number at 15 digits; fewer than 7 is not a dialable number. */
function looksLikePhone(match: string): boolean {
  let digits = 0;
  for (const ch of match) if (ch >= '0' && ch <= '9') digits++;
  return digits >= 7 && digits <= 15;
}

function redactPii(text: string): string {
  let out = text.replace(EMAIL_RE, PII_MARKER);
  out = out.replace(INTL_PHONE_RE, (m) => (looksLikePhone(m) ? PII_MARKER : m));
  out = out.replace(NANP_PHONE_RE, PII_MARKER);
  return out;
}

// ---------------------------------------------------------------------------
// Public API.

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
