import net from 'node:net';
import { fail, ok, warn, type Check } from './check.js';

/** The OTLP endpoint doctor tries: the traces-specific variable first, then the common one; undefined when neither is set. */
export function otlpEndpoint(env: NodeJS.ProcessEnv): { variable: string; value: string } | undefined {
  for (const variable of ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT']) {
    const value = env[variable]?.trim();
    if (value) return { variable, value };
  }
  return undefined;
}

/** host and port of an endpoint URL (the scheme's port when none is given). */
export function hostPort(raw: string): { host: string; port: number } | undefined {
  try {
    const u = new URL(raw);
    const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : u.protocol === 'http:' ? 80 : NaN;
    return Number.isInteger(port) && u.hostname ? { host: u.hostname.replace(/^\[|\]$/g, ''), port } : undefined;
  } catch {
    return undefined;
  }
}

/** A TCP connect with a deadline; nothing is sent. Resolves to undefined when it connected, else the error code. */
export function tcpConnect(host: string, port: number, timeoutMs = 1500): Promise<string | undefined> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    const done = (code: string | undefined) => {
      s.destroy();
      resolve(code);
    };
    s.setTimeout(timeoutMs, () => done('ETIMEDOUT'));
    s.once('connect', () => done(undefined));
    s.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? 'error'));
  });
}

/** The OTLP endpoint reachable (7). Unreachable is a warning: the daemon's own work goes on, spans are dropped and counted. */
export async function checkOtlp(env: NodeJS.ProcessEnv): Promise<Check> {
  const what = 'otlp endpoint';
  const ep = otlpEndpoint(env);
  if (!ep) return ok(what, 'OTEL_EXPORTER_OTLP_ENDPOINT not set here: nothing to try (the daemon reads its own environment)');
  const hp = hostPort(ep.value);
  if (!hp) return fail(what, `${ep.variable} is not a URL with a host`, `set ${ep.variable} to e.g. http://127.0.0.1:4318`);
  const code = await tcpConnect(hp.host, hp.port);
  if (code === undefined) return ok(what, `${hp.host}:${hp.port} (${ep.variable}) accepts a TCP connection`);
  return warn(
    what,
    `${hp.host}:${hp.port} (${ep.variable}) does not accept a connection (${code}): spans are dropped and counted until it does`,
    `start the collector there (e.g. docker compose up -d in the checkout), or correct ${ep.variable}`,
  );
}
