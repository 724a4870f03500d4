/**
 * Rule (a) of the §9.4 pipeline (`redact.ts`): secrets and credentials, in
 * three layers, each on the text as the pass received it: the secretlint
 * preset's findings, this module's own shapes (the §9.4 floor and its
 * hardening), then credentials typed on a command line.
 */

import { commandCredentialRanges } from './command-credentials.js';
import { ASSIGNED_VALUE, ASSIGNMENT_SEPARATOR, openingQuote, SECRET_MARKER, type Range } from './patterns.js';
import { scanWithSecretlint } from './secretlint.js';

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
export function redactAssigned(prefix: string, value: string): string {
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
  // the token run last walked: every end inside it reaches the same place (many findings in one run stay linear)
  let runFrom = -1;
  let runTo = -1;
  for (const { rule, range } of found.reports) {
    const start = Math.max(0, Math.min(range[0], text.length));
    let end = Math.min(Math.max(range[1], start), text.length);
    if (end >= runFrom && end <= runTo) end = runTo;
    else {
      runFrom = end;
      while (end < text.length && TOKEN_CHAR_RE.test(text[end]!)) end++;
      runTo = end;
    }
    if (URL_PASSWORD_RULES.has(rule) && URL_PASSWORD_RE.test(text.slice(start, end))) continue;
    ranges.push([start, end]);
  }
  return replaceRanges(text, ranges);
}

/** Rule (a), one pass. */
export function redactSecretShapes(text: string): string {
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
