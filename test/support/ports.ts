import { createServer, type Server } from 'node:net';

/**
 * `n` distinct free TCP ports on 127.0.0.1: each is bound to port 0 (the OS
 * picks), read back, and released only after all `n` are held, so no two of
 * them can be the same. A port may still be taken by someone else between the
 * release and its use: callers start their process and wait for its health
 * endpoint, which surfaces such a race as a clear startup failure.
 */
export async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => resolve());
      });
    }
    const ports = servers.map((s) => {
      const addr = s.address();
      if (!addr || typeof addr === 'string') throw new Error('listening socket has no port');
      return addr.port;
    });
    if (new Set(ports).size !== ports.length) throw new Error(`duplicate free ports: ${ports.join(',')}`);
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((r) => (s.listening ? s.close(() => r()) : r()))));
  }
}

/** One free loopback port. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}
