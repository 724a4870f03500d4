import type { StreamAccess } from './deps.js';
import { VERSIONS, type Frame } from './frames.js';
import type { ErrorCode } from '../../core/errors.js';

export type Role = 'emitter' | 'consumer' | 'both';

/** What the peer declared in its `hello` (AEP-0003 §4), kept for the roster (§4.1 rule 4) and routing. */
export interface Peer {
  readonly role: Role;
  readonly version: string;
  readonly agent?: string;
  readonly instance?: string;
  /** `capabilities.control` exactly as declared (absent when none was) */
  readonly control?: Readonly<Record<string, unknown>>;
  /** `capabilities.emits` as declared */
  readonly emits?: readonly unknown[];
}

export type HelloOutcome =
  | { readonly ok: true; readonly peer: Peer }
  | { readonly ok: false; readonly code: Extract<ErrorCode, 'version-unsupported' | 'invalid-hello' | 'unauthorized'>; readonly detail: string };

const ROLES: readonly Role[] = ['emitter', 'consumer', 'both'];

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

export const emits = (r: Role): boolean => r !== 'consumer';
export const consumes = (r: Role): boolean => r !== 'emitter';

/**
 * Check a peer's first frame (a `hello`): one version from the intersection,
 * taken in the peer's order of preference (AEP-0003 §4 rule 1); the role
 * (§4 rule 2, absent = consumer); an emitting role needs an authenticated
 * connection and `identity.agent` (§4 rule 3, §8.1). Capability keys are not
 * validated (§4 rule 4): only `control` and `emits` are kept, for the roster.
 */
export function negotiateHello(frame: Frame, access: StreamAccess): HelloOutcome {
  const offered = frame['versions'];
  const version = Array.isArray(offered) ? offered.find((v): v is string => typeof v === 'string' && (VERSIONS as readonly string[]).includes(v)) : undefined;
  if (version === undefined) return { ok: false, code: 'version-unsupported', detail: 'no version in common' };
  const rawRole = frame['role'] ?? 'consumer';
  const role = ROLES.find((r) => r === rawRole);
  if (role === undefined) return { ok: false, code: 'invalid-hello', detail: 'role must be emitter, consumer or both' };
  const identity = isObject(frame['identity']) ? frame['identity'] : {};
  const agent = typeof identity['agent'] === 'string' && identity['agent'] !== '' ? identity['agent'] : undefined;
  const instance = typeof identity['instance'] === 'string' ? identity['instance'] : undefined;
  if (emits(role)) {
    if (access.kind !== 'authenticated')
      return { ok: false, code: 'unauthorized', detail: 'emitting needs an authenticated connection (set AEP_TOKEN and pass it)' };
    if (agent === undefined) return { ok: false, code: 'invalid-hello', detail: 'an emitter hello needs identity.agent' };
  }
  const caps = isObject(frame['capabilities']) ? frame['capabilities'] : {};
  const control = isObject(caps['control']) ? caps['control'] : undefined;
  const declaredEmits = Array.isArray(caps['emits']) ? caps['emits'] : undefined;
  return {
    ok: true,
    peer: {
      role,
      version,
      ...(agent !== undefined ? { agent } : {}),
      ...(instance !== undefined ? { instance } : {}),
      ...(control !== undefined ? { control } : {}),
      ...(declaredEmits !== undefined ? { emits: declaredEmits } : {}),
    },
  };
}
