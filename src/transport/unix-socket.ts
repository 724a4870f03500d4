import { lstat, mkdir, stat, unlink } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';

/** Linux keeps 108 bytes for a socket path, the terminating NUL included. */
export const MAX_SOCKET_PATH_BYTES = 107;

export class SocketInUseError extends Error {
  override readonly name = 'SocketInUseError';
}

/** Does something accept connections on this socket? ECONNREFUSED (nobody listening) → false. */
export function socketAnswers(file: string, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const s = connect({ path: file });
    const done = (v: boolean | Error) => {
      clearTimeout(timer);
      s.destroy();
      if (v instanceof Error) reject(v);
      else resolve(v);
    };
    // a listener whose backlog is full is still a listener
    const timer = setTimeout(() => done(true), timeoutMs);
    s.once('connect', () => done(true));
    s.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED' || err.code === 'ENOENT') done(false);
      else if (err.code === 'EAGAIN') done(true);
      else done(new SocketInUseError(`cannot probe the hook socket ${file} (${err.code ?? 'error'}); refusing to start`));
    });
  });
}

/** Why a start is refused when something answers on its socket: two daemons must never share one. */
export function socketInUseRule(file: string): string {
  return `another hermes-aep daemon (or another process) answers on ${file}; stop it first, or give this one its own AEP_STATE_DIR or AEP_SOCKET`;
}

export interface PreparedSocket {
  /** the socket's directory is writable by group or others (someone else could replace the socket) */
  readonly dirExposed: boolean;
  /** a socket file left by a daemon that is gone was removed */
  readonly removedStale: boolean;
}

/**
 * Make the socket path ready to bind: its directory exists (created 0700),
 * and a socket file left by a dead daemon is removed. Refuses (throws) when
 * the path is something other than a socket, or when a daemon still answers
 * on it: two daemons must never share one state directory.
 */
export async function prepareSocketPath(file: string): Promise<PreparedSocket> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const dirExposed = ((await stat(dir)).mode & 0o022) !== 0;
  let st;
  try {
    st = await lstat(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { dirExposed, removedStale: false };
    throw err;
  }
  if (!st.isSocket()) throw new SocketInUseError(`${file} exists and is not a socket; refusing to replace it`);
  if (await socketAnswers(file)) throw new SocketInUseError(socketInUseRule(file));
  try {
    await unlink(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return { dirExposed, removedStale: true };
}
