import { createHash } from 'node:crypto';

const SAFE = /^[A-Za-z0-9_-]$/;
const MAX = 160;
const PLAIN = /^[A-Za-z0-9_-]{1,160}$/;

/**
 * A session id made safe as one file name: anything outside `[A-Za-z0-9_-]`
 * (dots included, so `.` and `..` cannot survive) is percent-encoded per
 * UTF-8 byte; long ids keep a readable prefix plus a hash of the whole id.
 * Injective for ids up to the length limit, so two sessions never share a file.
 */
export function safeFileName(id: string): string {
  // the common case (Hermes ids are [A-Za-z0-9_] already) in one native match
  if (PLAIN.test(id)) return id;
  let out = '';
  for (const ch of id) {
    if (SAFE.test(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (out.length === 0) out = '%00';
  if (out.length > MAX) {
    const hash = createHash('sha256').update(id, 'utf8').digest('hex').slice(0, 16);
    out = `${out.slice(0, MAX - 17)}~${hash}`;
  }
  return out;
}
