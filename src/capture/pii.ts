/** Rule (d) of the §9.4 pipeline (`redact.ts`): PII (email addresses, phone numbers). */

import { PII_MARKER } from './patterns.js';

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

export function redactPii(text: string): string {
  let out = text.replace(EMAIL_RE, PII_MARKER);
  out = out.replace(INTL_PHONE_RE, (m) => (looksLikePhone(m) ? PII_MARKER : m));
  out = out.replace(NANP_PHONE_RE, PII_MARKER);
  return out;
}
