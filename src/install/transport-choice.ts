import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { locateHermes } from './hermes-install.js';
import type { InstallOptions } from './install-options.js';
import { resolveTarget } from './shim-target.js';
import { readVersion } from './valid-hooks.js';
import { shimUrlOption, webhookUrl } from './webhook-target.js';

export type Transport = 'shell' | 'plugin' | 'webhook';

/** The transport `install` uses when `--transport` is not given, and one line saying why. */
export interface TransportChoice {
  readonly transport: Transport;
  readonly line: string;
}

const OTHERS = '--transport shell|plugin|webhook chooses another';

function versionAt(root: string): string {
  try {
    return readVersion(readFileSync(path.join(root, 'hermes_cli', '__init__.py'), 'utf8')) ?? 'version unknown';
  } catch {
    return 'version unknown';
  }
}

/** The daemon's webhook URL when the install's target is TCP and usable by a webhook; otherwise why not. */
function tcpWebhook(opts: InstallOptions, env: NodeJS.ProcessEnv): { ok: true } | { ok: false; why: string } {
  if (opts.socket !== undefined) return { ok: false, why: 'the target is the unix socket given by --socket' };
  let target;
  try {
    target = resolveTarget({ ...opts, url: shimUrlOption(opts.url) }, env);
  } catch {
    return { ok: false, why: 'the target is not usable (the install below says why)' };
  }
  if (!target.args.includes('--url')) return { ok: false, why: 'the target is a unix socket (give --url http://127.0.0.1:PORT or AEP_PORT for TCP)' };
  try {
    webhookUrl(target);
    return { ok: true };
  } catch (err) {
    return { ok: false, why: (err as Error).message };
  }
}

/**
 * The default transport, from the installed Hermes (the locator doctor uses; `--hermes` honoured) and the target:
 * `webhook` when that Hermes has outbound webhooks (agent/outbound_webhooks.py) and the daemon is on TCP (--url,
 * AEP_HOOK_URL, AEP_PORT): no process per hook and no code of ours in Hermes; else `plugin` when a Hermes is found
 * (measured cheaper than the shell shim per turn: docs/install.md); else `shell`, which works with any Hermes that
 * has shell hooks, since without a Hermes to look at nothing says the plugin can load. Never throws.
 */
export function chooseTransport(opts: InstallOptions, env: NodeJS.ProcessEnv = process.env): TransportChoice {
  const where = locateHermes(opts.hermes, env);
  if (!where.ok) return { transport: 'shell', line: `transport: shell (default: ${where.problem}; ${OTHERS})` };
  const about = `the Hermes at ${where.root} (${versionAt(where.root)}, found via ${where.via})`;
  const outbound = existsSync(path.join(where.root, 'agent', 'outbound_webhooks.py'));
  if (outbound) {
    const tcp = tcpWebhook(opts, env);
    if (tcp.ok) return { transport: 'webhook', line: `transport: webhook (default: ${about} has outbound webhooks and the daemon is on TCP; ${OTHERS})` };
    return {
      transport: 'plugin',
      line: `transport: plugin (default: ${about} has outbound webhooks, but the webhook transport needs a TCP target: ${tcp.why}; ${OTHERS})`,
    };
  }
  return {
    transport: 'plugin',
    line: `transport: plugin (default: ${about} has no outbound webhooks; the plugin costs less per turn than the shell shim; ${OTHERS})`,
  };
}
