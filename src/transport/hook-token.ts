import { createSecretIfAbsent, readSecretFile, SECRET_PATTERN } from './secret-file.js';

/** The hook token: 32 random bytes as 64 lower-case hex characters, one line (secret-file.ts). */
export const HOOK_TOKEN_PATTERN = SECRET_PATTERN;

export class HookTokenError extends Error {
  override readonly name = 'HookTokenError';
}

export interface HookToken {
  readonly token: string;
  /** true when this call wrote the file */
  readonly created: boolean;
  /** true when group or others may read the file */
  readonly exposed: boolean;
}

const LABEL = 'the hook token';
const fail = (m: string) => new HookTokenError(m);

/** Create the token file when it is missing and say whether this call did (secret-file.ts: never overwritten). */
export function createHookTokenIfAbsent(file: string): Promise<boolean> {
  return createSecretIfAbsent(file);
}

/** Read the token file, creating it first when missing. */
export async function ensureHookToken(file: string): Promise<HookToken> {
  const created = await createSecretIfAbsent(file);
  return { ...(await readHookToken(file)), created };
}

/** Read an existing token file; a writer that just created it gets a moment to finish. */
export async function readHookToken(file: string): Promise<Omit<HookToken, 'created'>> {
  const r = await readSecretFile(file, LABEL, fail);
  return { token: r.secret, exposed: r.exposed };
}
