import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Hermes's outbound webhook signature (agent/outbound_webhooks.py `_deliver`,
 * NousResearch/hermes-agent 1fda2280): `X-Hermes-Signature-256:
 * sha256=<hex>`, the lower-case hex HMAC-SHA256 of the raw body bytes under
 * the shared secret's UTF-8 bytes. Nothing else is signed: the timestamp and
 * the delivery id are protected because they are inside the body.
 */
export const SIGNATURE_HEADER = 'x-hermes-signature-256';
export const EVENT_HEADER = 'x-hermes-event';
export const DELIVERY_HEADER = 'x-hermes-delivery';

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

/** The HMAC-SHA256 of `body` under `secret` (UTF-8), 32 bytes. */
export function bodyDigest(secret: string, body: Uint8Array): Buffer {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest();
}

/**
 * Whether `header` is `sha256=<hex>` of the raw `body` under `secret`. The
 * digests are compared in constant time (both are 32 bytes once the header's
 * shape is checked; the shape itself is public).
 */
export function signatureMatches(secret: string, body: Uint8Array, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false;
  const m = SIGNATURE.exec(header.trim());
  if (!m) return false;
  return timingSafeEqual(Buffer.from(m[1]!, 'hex'), bodyDigest(secret, body));
}
