/**
 * `hermes-aep ui [--url]`: the live view's address. A browser cannot open a
 * Unix socket, so the page needs the daemon's TCP listener (AEP_PORT). The
 * token rides in the URL's fragment (`#token=`), which a browser never
 * sends to the server: AEP_TOKEN when set (read and answer), else the hook
 * token file's content (read only), else none. `--url` prints the address;
 * without it the address is opened with `xdg-open` / `open` when one is on
 * PATH, else printed. The token is printed or opened, never logged.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, type DaemonConfig } from '../config/config.js';

export const NEEDS_TCP =
  "hermes-aep ui: the page needs the daemon's TCP listener (start it with AEP_PORT=8393, and run this with the same AEP_PORT): a browser cannot open a Unix socket";

/** The host a browser reaches the listener by: a wildcard bind is reached on the loopback (and the Host guard accepts that name). */
function browserHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** AEP_TOKEN, else the hook token file's content when this user can read it, else none. */
function tokenFor(config: DaemonConfig): string | undefined {
  if (config.stream.token !== undefined) return config.stream.token;
  try {
    const t = readFileSync(config.tokenFile, 'utf8').trim();
    return /^[0-9a-f]{64}$/.test(t) ? t : undefined;
  } catch {
    return undefined;
  }
}

/** The page's URL, or undefined without a fixed TCP port. */
export function pageUrl(config: DaemonConfig): string | undefined {
  if (config.port === undefined || config.port === 0) return undefined;
  const token = tokenFor(config);
  return `http://${browserHost(config.host)}:${config.port}/ui${token !== undefined ? `#token=${encodeURIComponent(token)}` : ''}`;
}

/** The first of `names` that is an executable file on PATH. */
function onPath(names: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  for (const name of names) {
    for (const dir of (env['PATH'] ?? '').split(path.delimiter).filter(Boolean)) {
      const p = path.join(dir, name);
      try {
        accessSync(p, constants.X_OK);
        return p;
      } catch {
        /* next */
      }
    }
  }
  return undefined;
}

export interface UiCliOptions {
  readonly url?: boolean;
}

export async function runUiCli(o: UiCliOptions, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const url = pageUrl(loadConfig(env));
  if (url === undefined) {
    process.stderr.write(`${NEEDS_TCP}\n`);
    process.exitCode = 2;
    return;
  }
  const opener = o.url ? undefined : onPath(process.platform === 'darwin' ? ['open'] : ['xdg-open', 'open'], env);
  if (!opener) {
    process.stdout.write(`${url}\n`);
    return;
  }
  const opened = await new Promise<boolean>((resolve) => {
    const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
  if (!opened) process.stdout.write(`${url}\n`);
}
