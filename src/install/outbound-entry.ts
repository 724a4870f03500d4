import { isMap, isSeq, isScalar } from 'yaml';

/**
 * The webhook transport's entry in `hooks.outbound` (Hermes's outbound webhooks: a list of mappings with `url`,
 * `events`, `secret` or `secret_env`, `matcher`, `timeout`, `name`; agent/outbound_webhooks.py at
 * NousResearch/hermes-agent 1fda22807cee0e8fbfa65c124500d617c0e9f7fd). Ours is the item named `hermes-aep` whose
 * `url` ends in `/webhook`; every line install writes for it ends in MARK, like the shell hooks' lines.
 */
export const OUTBOUND_KEY = 'outbound';
export const OUTBOUND_NAME = 'hermes-aep';

export interface OutboundEntry {
  /** `http://<loopback>:<port>/webhook` */
  readonly url: string;
  readonly events: readonly string[];
  /** the state dir's webhook-secret, written inline (docs/webhook.md says why not secret_env) */
  readonly secret: string;
}

export function isOurOutboundItem(item: unknown): boolean {
  if (!isMap(item)) return false;
  const url = item.get('url');
  return item.get('name') === OUTBOUND_NAME && typeof url === 'string' && /\/webhook$/.test(url);
}

/** The item holds exactly `entry` (and nothing else). */
export function outboundMatches(item: unknown, entry: OutboundEntry): boolean {
  if (!isMap(item) || item.items.length !== 4) return false;
  const events = item.get('events', true);
  const names = isSeq(events) ? events.items.map((i) => (isScalar(i) ? i.value : undefined)) : undefined;
  return (
    item.get('name') === OUTBOUND_NAME &&
    item.get('url') === entry.url &&
    item.get('secret') === entry.secret &&
    names !== undefined &&
    names.length === entry.events.length &&
    names.every((n, i) => n === entry.events[i])
  );
}

/** The item's fields as YAML values: name and event names plain, url and secret double-quoted (never read as a number). */
function fields(entry: OutboundEntry, secret: string): [string, string][] {
  return [
    ['name', OUTBOUND_NAME],
    ['url', JSON.stringify(entry.url)],
    ['events', `[${entry.events.join(', ')}]`],
    ['secret', secret],
  ];
}

/** The block item's lines (without MARK) at dash column `dash`; `secret` is what to show for it (the value, or a mask). */
export function outboundBlock(entry: OutboundEntry, dash: number, secret = JSON.stringify(entry.secret)): string[] {
  const sp = ' '.repeat(dash);
  return fields(entry, secret).map(([k, v], i) => `${sp}${i === 0 ? '- ' : '  '}${k}: ${v}`);
}

/** The item in flow style, for a flow list `outbound: [...]`. */
export function outboundFlow(entry: OutboundEntry): string {
  return `{${fields(entry, JSON.stringify(entry.secret))
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ')}}`;
}
