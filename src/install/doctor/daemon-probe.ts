import http from 'node:http';

/** Where a daemon is looked for: its unix socket, or its TCP address (with the hook token). */
export type Endpoint = { readonly socket: string } | { readonly url: string; readonly token?: string | undefined };

/** What `GET /healthz` gave: an answer (status + parsed body), or the connection error's code. */
export type Probe =
  | { readonly answered: true; readonly status: number; readonly body: Record<string, unknown> | undefined }
  | { readonly answered: false; readonly code: string };

export const endpointName = (e: Endpoint): string => ('socket' in e ? `unix socket ${e.socket}` : e.url);

/** `GET /healthz`, bounded in time; never throws. */
export function probeHealth(e: Endpoint, timeoutMs = 2000): Promise<Probe> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { host: '127.0.0.1' };
    let opts: http.RequestOptions;
    if ('socket' in e) opts = { socketPath: e.socket, path: '/healthz', headers };
    else {
      const u = new URL('/healthz', e.url);
      headers.host = u.host;
      if (e.token) headers.authorization = `Bearer ${e.token}`;
      opts = { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port || 80, path: '/healthz', headers };
    }
    const req = http.get({ ...opts, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        let body: Record<string, unknown> | undefined;
        try {
          const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
          body = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
        } catch {
          body = undefined;
        }
        resolve({ answered: true, status: res.statusCode ?? 0, body });
      });
      res.on('error', () => resolve({ answered: false, code: 'ECONNRESET' }));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ answered: false, code: err.code ?? 'error' }));
  });
}
