import { createHash, timingSafeEqual } from 'node:crypto';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * AEP_TOKEN as the live view's answers need it: from `Authorization: Bearer`
 * only (never a query, never a cookie), compared in constant time. Absent
 * (no AEP_TOKEN configured): nothing matches.
 */
export class AnswerToken {
  private readonly digest: Buffer | undefined;

  constructor(token: string | undefined) {
    this.digest = token === undefined ? undefined : sha256(token);
  }

  get configured(): boolean {
    return this.digest !== undefined;
  }

  presented(authorization: string | undefined): boolean {
    if (!this.digest) return false;
    const m = /^Bearer[ ]+(\S+)[ ]*$/i.exec(authorization ?? '');
    return timingSafeEqual(sha256(m?.[1] ?? ''), this.digest) && m !== null;
  }
}
