/**
 * The headers on every answer of the live view's routes: a strict
 * Content-Security-Policy (scripts, styles and requests from this daemon
 * only, no inline code, no framing), no sniffing, no referrer, no caching,
 * and both cross-origin isolation headers. No CORS header is ever sent, so a
 * foreign page's preflight fails.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};
