/**
 * `GET /healthz` of a daemon, over its Unix socket or TCP (the route needs no
 * token), read whole: whether a daemon answers there, and what it reports
 * (its counters, its trace exporter, or why it refused to start).
 */
import { request } from 'node:http';

export type DaemonAddress = { readonly kind: 'socket'; readonly path: string } | { readonly kind: 'url'; readonly origin: string };

export type Probe =
  /** a daemon answered (200, or 503 degraded): its report */
  | { readonly kind: 'up'; readonly health: Record<string, unknown> }
  /** a daemon answered but is not taking hooks (503 start-refused, or something else than a daemon) */
  | { readonly kind: 'refused'; readonly why: string }
  /** nothing listens there (no socket file, connection refused) */
  | { readonly kind: 'none'; readonly code: string }
  /** something else went wrong reaching it */
  | { readonly kind: 'unreachable'; readonly code: string };

const NOBODY = new Set(['ENOENT', 'ECONNREFUSED', 'ENOTSOCK']);

export function describeAddress(a: DaemonAddress): string {
  return a.kind === 'socket' ? `unix:${a.path}` : a.origin;
}

const rec = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** Why a refused start says it refused: its problems (variable: rule), else its detail. */
function refusal(body: Record<string, unknown>): string {
  const problems = Array.isArray(body['problems']) ? body['problems'].map(rec).filter((p) => p !== undefined) : [];
  const named = problems.map((p) => `${String(p['variable'])}: ${String(p['rule'])}`);
  if (named.length > 0) return `it refused to start (${named.join('; ')})`;
  return typeof body['detail'] === 'string' ? `it refused to start (${body['detail']})` : 'it refused to start';
}

export function probeHealth(a: DaemonAddress, timeoutMs = 5_000): Promise<Probe> {
  return new Promise((resolve) => {
    const where =
      a.kind === 'socket'
        ? { socketPath: a.path, path: '/healthz' }
        : (() => {
            const u = new URL('/healthz', a.origin);
            return { host: u.hostname, port: u.port, path: u.pathname };
          })();
    const req = request({ ...where, method: 'GET', headers: { host: 'localhost' }, agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', () => resolve({ kind: 'unreachable', code: 'ECONNRESET' }));
      res.on('end', () => {
        let body: Record<string, unknown> | undefined;
        try {
          body = rec(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          body = undefined;
        }
        const status = res.statusCode ?? 0;
        if (body !== undefined && body['error'] === 'start-refused') return resolve({ kind: 'refused', why: refusal(body) });
        if (body !== undefined && (status === 200 || (status === 503 && body['status'] === 'degraded'))) return resolve({ kind: 'up', health: body });
        resolve({
          kind: 'refused',
          why: `GET /healthz answered ${status}${typeof body?.['error'] === 'string' ? ` ${body['error']}` : ''}, not a hermes-aep daemon's report`,
        });
      });
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? 'EIO';
      resolve(NOBODY.has(code) ? { kind: 'none', code } : { kind: 'unreachable', code });
    });
    req.end();
  });
}

/** A counter of a /healthz report by its dotted path (0 when absent). */
export function counter(health: Record<string, unknown>, dotted: string): number {
  let v: unknown = health;
  for (const k of dotted.split('.')) v = rec(v)?.[k];
  return typeof v === 'number' ? v : 0;
}

/** The trace exporter the daemon reports (`sinks.otel.exporter`): file, otlp, or none when the mirror is off. */
export function traceExporter(health: Record<string, unknown>): string {
  const v = rec(rec(health['sinks'])?.['otel'])?.['exporter'];
  return typeof v === 'string' ? v : 'none';
}
