/**
 * Before the daemon writes anything (its directories, the hook token, the
 * rebuilt state): are the listeners it is about to open free? The TCP port
 * is bound once and released (a port taken by another process, or a host
 * address this machine does not have, refuses the start here rather than as
 * a bare `listen EADDRINUSE` after the side effects); the Unix socket is
 * probed without touching it (a daemon answering there keeps it). Each
 * problem names its setting and the fix, in the bad-settings format.
 */
import { lstat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { socketAnswers, socketInUseRule } from './unix-socket.js';

/** A setting and the rule it breaks (the daemon's ConfigError takes these as they are). */
export interface ListenerProblem {
  readonly variable: 'AEP_PORT' | 'AEP_HOST' | 'AEP_SOCKET';
  readonly rule: string;
}

/** The rule a refused TCP listen breaks, by its error code; undefined for a code the real listen should report itself. */
export function portRule(code: string | undefined, host: string, port: number): ListenerProblem | undefined {
  const at = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return { variable: 'AEP_PORT', rule: `${at} is already in use by another process (another hermes-aep daemon?); stop it, or set AEP_PORT to a free port` };
    case 'EACCES':
      return { variable: 'AEP_PORT', rule: `${at} may not be bound by this user (a port below 1024 needs privileges); set AEP_PORT to 1024 or above` };
    case 'EADDRNOTAVAIL':
      return { variable: 'AEP_HOST', rule: `${host} is not an address of this machine; set AEP_HOST to one (127.0.0.1 by default)` };
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { variable: 'AEP_HOST', rule: `${host} does not resolve to an address; set AEP_HOST to an IP address or a resolvable name` };
    default:
      return undefined;
  }
}

/** Bind `host:port` and let it go; the problem when it cannot be bound. Port 0 (any free port) is always free. */
export function probePort(host: string, port: number): Promise<ListenerProblem | undefined> {
  if (port === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(portRule(err.code, host, port)));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/** A socket file that answers: another daemon holds it. Nothing is created or removed here (prepareSocketPath does that later). */
async function probeSocket(file: string): Promise<ListenerProblem | undefined> {
  try {
    if (!(await lstat(file)).isSocket()) return undefined;
  } catch {
    return undefined;
  }
  try {
    return (await socketAnswers(file)) ? { variable: 'AEP_SOCKET', rule: socketInUseRule(file) } : undefined;
  } catch (err) {
    return { variable: 'AEP_SOCKET', rule: (err as Error).message };
  }
}

/** Every listener problem at once (the socket's and the port's), before any side effect. */
export async function probeListeners(plan: { readonly socket?: string; readonly host: string; readonly port?: number }): Promise<ListenerProblem[]> {
  const found = await Promise.all([plan.socket ? probeSocket(plan.socket) : undefined, plan.port !== undefined ? probePort(plan.host, plan.port) : undefined]);
  return found.filter((p): p is ListenerProblem => p !== undefined);
}
