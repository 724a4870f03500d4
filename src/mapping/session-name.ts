import { UNKNOWN_SESSION } from '../aep/event.js';

/** `unknown`, `unknown~`, `unknown~~` …: the lane's name and the ids one escape step from it. */
const RESERVED = new RegExp(`^${UNKNOWN_SESSION}~*$`);

/**
 * A Hermes session id as an AEP session: itself, except that the name of the
 * lane for hooks without a session (`unknown`) is reserved. An id in
 * `unknown`, `unknown~`, `unknown~~` … gets one `~` more, so a real session
 * named `unknown` never shares that lane, its seqs or its history file, and
 * two different ids still never share a session.
 */
export function sessionName(id: string): string;
export function sessionName(id: string | undefined): string | undefined;
export function sessionName(id: string | undefined): string | undefined {
  return id !== undefined && RESERVED.test(id) ? `${id}~` : id;
}
