import { REGISTERED_HOOKS } from '../hermes/envelope.js';
import { isInstalled, ourCommands, ourOutbound, timeoutFor, type ConfigEdit, type HookEntry } from './config-entries.js';
import { hasPluginLines, isPluginEnabled, planPluginEnable, PLUGIN_NAME } from './config-plugin.js';
import { planInsert, shellItems, type HooksItem } from './config-install.js';
import { outboundBlock, outboundFlow, outboundMatches, OUTBOUND_KEY, OUTBOUND_NAME, type OutboundEntry } from './outbound-entry.js';
import { removeHooks } from './config-uninstall.js';
import { ConfigRefused, MARK } from './yaml-source.js';

export { shlexQuote } from './shell-words.js';
export { isOurCommand, shimCommand } from './our-command.js';
export { ConfigRefused, CREATED_MARK, MARK, WAS_PREFIX } from './yaml-source.js';
export type { ConfigEdit, HookEntry } from './config-entries.js';
export { ourCommands, timeoutFor } from './config-entries.js';
export { removeHooks } from './config-uninstall.js';
export { PLUGIN_NAME } from './config-plugin.js';

/**
 * Editing `$HERMES_HOME/config.yaml` so that uninstall gives back the exact
 * bytes install found. Install only ever ADDS whole lines, each ending in the
 * comment MARK (or, inside a flow list `[...]`, one `{command, timeout}` item),
 * and where a value has to change (`hooks: {}`, `hooks: ~`, `event: ~`) it
 * keeps the original lines as comments prefixed WAS. Uninstall removes marked
 * lines and our items, and un-comments WAS lines: nothing is re-rendered, so
 * comments, spacing, quoting, CRLF, a missing final newline and YAML 1.1
 * values (`0755`, `1e3`) stay as they were. Lines a user added in between
 * stay too: a marked key that still holds someone else's hook loses only the
 * mark. A config that cannot be edited this way is refused with the reason,
 * and every install proves, before anything is written, that uninstall gives
 * the file back byte for byte.
 */

/**
 * Add (or refresh) our entry for each of `events`. Idempotent: when the
 * file already holds exactly these entries, nothing changes. Any older entry
 * of ours is taken out first (exactly as uninstall would), also under an
 * event no longer in `events`, then the new ones go in; before returning,
 * the result is proven to uninstall back to the file without our entries,
 * byte for byte.
 */
export function addHooks(text: string, entry: HookEntry, events: readonly string[] = REGISTERED_HOOKS, opts: { create?: boolean } = {}): ConfigEdit {
  if (isInstalled(text, entry, events) && !hasPluginLines(text) && ourOutbound(text).length === 0) return { text, changed: false, changes: [] };
  const before = removeHooks(text);
  const base = before.deleteFile ? '' : before.text;
  const create = Boolean(before.deleteFile || opts.create);
  const had = new Set(before.changes.map((c) => /^hooks\.([^:]+):/.exec(c)?.[1]).filter(Boolean));
  const out = planInsert(base, shellItems(entry, events), create);
  const back = removeHooks(out);
  if ((back.deleteFile ? '' : back.text) !== base || Boolean(back.deleteFile) !== create || !isInstalled(out, entry, events)) {
    throw new ConfigRefused('install could not prove that uninstall would give this config.yaml back byte for byte (please report its shape)');
  }
  const changes = events.map((ev) => `hooks.${ev}: ${had.has(ev) ? 'refresh' : 'add'} ${entry.command} (timeout ${timeoutFor(entry, ev)}s)`);
  // our entries for an event no longer registered (post_api_request after `install --no-model-calls`) are gone
  const dropped = before.changes.filter((c) => {
    const ev = /^hooks\.([^:]+):/.exec(c)?.[1];
    return ev !== undefined && !events.includes(ev);
  });
  return { text: out, changed: true, changes: [...before.changes.filter((c) => c.startsWith('plugins.')), ...dropped, ...changes] };
}

/**
 * The plugin transport: `hermes-aep` in `plugins.enabled`, and none of our hook entries (they would deliver every
 * hook twice). Idempotent, and proven like addHooks: uninstall gives back the file without our lines, byte for byte.
 */
export function enablePlugin(text: string, opts: { create?: boolean } = {}): ConfigEdit {
  if (isPluginEnabled(text) && ourCommands(text).length === 0 && ourOutbound(text).length === 0) return { text, changed: false, changes: [] };
  const before = removeHooks(text);
  const base = before.deleteFile ? '' : before.text;
  const create = Boolean(before.deleteFile || opts.create);
  const out = planPluginEnable(base, create);
  const back = removeHooks(out);
  if (
    (back.deleteFile ? '' : back.text) !== base ||
    Boolean(back.deleteFile) !== create ||
    !isPluginEnabled(out) ||
    ourCommands(out).length > 0 ||
    ourOutbound(out).length > 0
  ) {
    throw new ConfigRefused('install could not prove that uninstall would give this config.yaml back byte for byte (please report its shape)');
  }
  const removed = before.changes.filter((c) => c.startsWith('hooks.'));
  return { text: out, changed: out !== text, changes: [...removed, ...(out === base ? [] : [`plugins.enabled: add ${PLUGIN_NAME}`])] };
}

/** The webhook entry as planInsert adds it under `hooks.outbound`, every block line marked. */
function outboundItem(entry: OutboundEntry): HooksItem {
  return { key: OUTBOUND_KEY, block: (dash) => outboundBlock(entry, dash).map((line) => `${line}  ${MARK}`), flow: outboundFlow(entry) };
}

/** Exactly the webhook transport's entries: `webhook` as our one outbound item, `shell` (the gated events) as our only shell hooks. */
function isWebhookInstalled(text: string, shell: { entry: HookEntry; events: readonly string[] } | undefined, webhook: OutboundEntry): boolean {
  const ours = ourOutbound(text);
  if (ours.length !== 1 || !ours[0]!.clean || !outboundMatches(ours[0]!.item, webhook) || hasPluginLines(text)) return false;
  return shell ? isInstalled(text, shell.entry, shell.events) : ourCommands(text).length === 0;
}

/**
 * The webhook transport: our entry in `hooks.outbound` (named hermes-aep), and a shell hook only for the gated events
 * (`shell`: a webhook cannot answer), none elsewhere. Idempotent, and proven like addHooks: uninstall gives back the
 * file without our lines, byte for byte. The changes name the url and the events, never the secret.
 */
export function addWebhook(
  text: string,
  shell: { entry: HookEntry; events: readonly string[] } | undefined,
  webhook: OutboundEntry,
  opts: { create?: boolean } = {},
): ConfigEdit {
  if (isWebhookInstalled(text, shell, webhook)) return { text, changed: false, changes: [] };
  const before = removeHooks(text);
  const base = before.deleteFile ? '' : before.text;
  const create = Boolean(before.deleteFile || opts.create);
  const items = [...(shell ? shellItems(shell.entry, shell.events) : []), outboundItem(webhook)];
  const out = planInsert(base, items, create);
  const back = removeHooks(out);
  if ((back.deleteFile ? '' : back.text) !== base || Boolean(back.deleteFile) !== create || !isWebhookInstalled(out, shell, webhook)) {
    throw new ConfigRefused('install could not prove that uninstall would give this config.yaml back byte for byte (please report its shape)');
  }
  const had = new Set(before.changes.map((c) => /^hooks\.([^:]+):/.exec(c)?.[1]).filter(Boolean));
  const wanted = new Set([...(shell?.events ?? []), 'outbound']);
  const dropped = before.changes.filter((c) => {
    const ev = /^hooks\.([^:]+):/.exec(c)?.[1];
    return ev !== undefined && !wanted.has(ev);
  });
  const shellChanges = shell
    ? shell.events.map((ev) => `hooks.${ev}: ${had.has(ev) ? 'refresh' : 'add'} ${shell.entry.command} (timeout ${timeoutFor(shell.entry, ev)}s)`)
    : [];
  const hook = `hooks.outbound: webhook ${OUTBOUND_NAME} ${had.has('outbound') ? 'refreshed' : 'added'}: ${webhook.url} (${webhook.events.length} events: ${webhook.events.join(', ')})`;
  return { text: out, changed: true, changes: [...before.changes.filter((c) => c.startsWith('plugins.')), ...dropped, ...shellChanges, hook] };
}
