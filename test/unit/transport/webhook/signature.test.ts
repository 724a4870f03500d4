import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signatureMatches } from '../../../../src/transport/webhook/signature.js';
import { opensslHmac } from '../../../support/hermes-webhook.js';

const SECRET = '0123456789abcdef'.repeat(4);

describe("Hermes's outbound webhook signature (X-Hermes-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>)", () => {
  it('accepts the signature openssl computes over the same bytes (non-ASCII UTF-8 included), in either hex case', () => {
    for (const text of ['{}', '{"hook_event_name": "on_session_start", "extra": {"é": "ü ☃"}}', '']) {
      const body = Buffer.from(text, 'utf8');
      const hex = opensslHmac(SECRET, body);
      expect(signatureMatches(SECRET, body, `sha256=${hex}`)).toBe(true);
      expect(signatureMatches(SECRET, body, `sha256=${hex.toUpperCase()}`)).toBe(true);
    }
  });

  it('refuses a missing, malformed, truncated or other-secret signature', () => {
    const body = Buffer.from('{"a": 1}');
    const hex = opensslHmac(SECRET, body);
    for (const h of [
      undefined,
      '',
      hex,
      `sha1=${hex}`,
      `sha256=${hex.slice(1)}`,
      `sha256=${hex}0`,
      `sha256=${opensslHmac('x'.repeat(64), body)}`,
      ['sha256=' + hex],
    ])
      expect([h, signatureMatches(SECRET, body, h)]).toEqual([h, false]);
  });

  it('any one flipped bit of the body, or any other secret, fails the check (fast-check)', () => {
    const hexOf = (secret: string, body: Uint8Array) => `sha256=${opensslHmac(secret, Buffer.from(body))}`;
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 200 }), fc.nat(), fc.nat({ max: 7 }), (body, at, bit) => {
        const header = hexOf(SECRET, body);
        expect(signatureMatches(SECRET, body, header)).toBe(true);
        const flipped = Uint8Array.from(body);
        flipped[at % flipped.length]! ^= 1 << bit;
        expect(signatureMatches(SECRET, flipped, header)).toBe(false);
      }),
      { numRuns: 40 },
    );
  });
});
