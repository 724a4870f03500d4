import { existsSync } from 'node:fs';
import path from 'node:path';
import { locateHermes } from './hermes-install.js';
import type { InstallGates } from './gates.js';
import type { ShimTarget } from './shim-target.js';

/**
 * What `install --transport webhook` needs before it writes anything: a Hermes that has outbound webhooks, the
 * daemon on TCP (Hermes posts with urllib to an http:// URL: a Unix socket cannot take it), and the events the
 * webhook carries. Each refusal says what to do; the CLI exits 2 on it.
 */
export class WebhookRefused extends Error {
  override readonly name = 'WebhookRefused';
  /** the CLI's exit status */
  readonly exitStatus = 2;
}

/** The located Hermes with `agent/outbound_webhooks.py`, or a refusal naming what was found. */
export function requireOutboundWebhooks(given: string | undefined, env: NodeJS.ProcessEnv = process.env): { root: string; via: string } {
  const where = locateHermes(given, env);
  if (!where.ok) throw new WebhookRefused(`--transport webhook needs a Hermes with outbound webhooks: ${where.problem}`);
  const file = path.join(where.root, 'agent', 'outbound_webhooks.py');
  if (!existsSync(file))
    throw new WebhookRefused(
      `the Hermes at ${where.root} (found via ${where.via}) has no outbound webhooks (no agent/outbound_webhooks.py; they are in Hermes 0.21): upgrade it, give another with --hermes, or install with --transport shell or plugin (plugin is what install picks for it without --transport)`,
    );
  return { root: where.root, via: where.via };
}

/** `--url` with the daemon's `/webhook` path given as `/hook` (the shim's path, for the gated shell hooks); others as they are. */
export function shimUrlOption(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const u = new URL(url);
    if (u.pathname === '/webhook') u.pathname = '/hook';
    return u.href;
  } catch {
    return url; // resolveTarget says what is wrong with it
  }
}

/** `http://<host>:<port>/webhook` from the TCP target resolveTarget chose (--url, AEP_HOOK_URL, AEP_PORT). */
export function webhookUrl(target: ShimTarget): string {
  const i = target.args.indexOf('--url');
  if (i < 0)
    throw new WebhookRefused(
      `--transport webhook needs the daemon on TCP (Hermes posts to an http:// URL; it cannot reach ${target.summary.replace(/ \(.*$/, '')}): give --url http://127.0.0.1:PORT, or set AEP_PORT (the daemon needs the same AEP_PORT)`,
    );
  const u = new URL(target.args[i + 1]!);
  if (u.pathname !== '/hook' || u.search !== '' || u.hash !== '')
    throw new WebhookRefused(`--transport webhook: the daemon's URL must be http://HOST:PORT (its /webhook route is at the root), not ${u.href}`);
  u.pathname = '/webhook';
  return u.href;
}

/**
 * The events the webhook carries: what the shell transport registers (every one of them can be delivered: any
 * VALID_HOOKS name can, agent/outbound_webhooks.py at 1fda22807cee0e8fbfa65c124500d617c0e9f7fd), less the gated
 * ones, which keep a shell hook (a webhook's answer is ignored) and so are not delivered twice.
 */
export function splitEvents(events: readonly string[], gates: InstallGates): { webhook: string[]; shell: string[] } {
  const gated = new Set([...(gates.control ? ['pre_tool_call'] : []), ...(gates.instruct ? ['pre_llm_call'] : [])]);
  return { webhook: events.filter((e) => !gated.has(e)), shell: events.filter((e) => gated.has(e)) };
}
