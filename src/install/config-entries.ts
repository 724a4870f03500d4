import { isMap, isSeq, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
import { isOurCommand } from './our-command.js';
import { isOurOutboundItem, OUTBOUND_KEY } from './outbound-entry.js';
import { lineOf, lines, lineStartAfter, type Lines } from './text-edits.js';
import { contentEnd, dashOffset, findPair, keyName, load, marks, range, type Marks } from './yaml-source.js';

// Finding our entries under hooks: in config.yaml (what install writes, what uninstall takes out).

/** What `install` writes for each registered event: the command, and its `timeout:` (`timeouts` for the events that differ). */
export interface HookEntry {
  readonly command: string;
  readonly timeout: number;
  readonly timeouts?: Readonly<Record<string, number>>;
}

/** The `timeout:` install writes for `event`. */
export function timeoutFor(entry: HookEntry, event: string): number {
  return entry.timeouts?.[event] ?? entry.timeout;
}

export interface ConfigEdit {
  readonly text: string;
  readonly changed: boolean;
  /** one line per event touched, for --dry-run and the install report */
  readonly changes: string[];
  /** uninstall: the file was created by install and nothing else is left in it */
  readonly deleteFile?: boolean;
}

export function isOurItem(item: unknown): boolean {
  return isMap(item) && isOurCommand(item.get('command'));
}

/** How our items are told apart under `hooks.<key>`: a shell hook's command, or (under `outbound`) the webhook entry's name and url. */
export function oursPredicate(key: string | undefined): (item: unknown) => boolean {
  return key === OUTBOUND_KEY ? isOurOutboundItem : isOurItem;
}

interface OursInfo {
  /** per event pair: our items, and whether each is exactly what install writes (all lines marked / a flow item) */
  readonly perPair: { pair: Pair; event: string | undefined; ours: { item: YAMLMap; clean: boolean }[] }[];
}

export function itemLines(l: Lines, item: Node): [number, number] {
  const r = range(item)!;
  const first = lineOf(l, dashOffset(l.text, r[0]));
  const last = lineOf(l, Math.max(lineStartAfter(l, contentEnd(item)) - 1, r[0]));
  return [first, last];
}

export function oursIn(l: Lines, m: Marks, hooks: YAMLMap): OursInfo {
  const perPair: OursInfo['perPair'] = [];
  for (const pair of hooks.items) {
    const ours: { item: YAMLMap; clean: boolean }[] = [];
    const isOurs = oursPredicate(keyName(pair));
    if (isSeq(pair.value)) {
      const seq = pair.value;
      for (const item of seq.items) {
        if (!isOurs(item)) continue;
        let clean = true;
        if (!seq.flow) {
          const [a, b] = itemLines(l, item as Node);
          for (let i = a; i <= b; i++) if (!m.marked.has(i)) clean = false;
        }
        ours.push({ item: item as YAMLMap, clean });
      }
    }
    perPair.push({ pair, event: keyName(pair), ours });
  }
  return { perPair };
}

export function hooksMap(doc: Document): { pair: Pair; map: YAMLMap } | undefined {
  const root = doc.contents;
  if (!isMap(root) || root.flow) return undefined;
  const pair = findPair(root, 'hooks');
  return pair && isMap(pair.value) ? { pair, map: pair.value } : undefined;
}

/** Already exactly installed: one clean entry of ours per event with this command and timeout, none elsewhere. */
export function isInstalled(text: string, entry: HookEntry, events: readonly string[]): boolean {
  const doc = load(text);
  const h = hooksMap(doc);
  if (!h) return false;
  const l = lines(text);
  const perPair = oursIn(l, marks(l), h.map).perPair.filter((p) => p.event !== OUTBOUND_KEY);
  const winners = new Set(events.map((e) => perPair.filter((p) => p.event === e).pop()));
  for (const p of perPair) {
    if (!winners.has(p)) {
      if (p.ours.length > 0) return false;
      continue;
    }
    const [only, ...more] = p.ours;
    if (!only || more.length > 0 || !only.clean) return false;
    if (only.item.get('command') !== entry.command || Number(only.item.get('timeout')) !== timeoutFor(entry, p.event!)) return false;
  }
  return winners.size === events.length && !winners.has(undefined);
}

/** The commands of our entries in a config (what uninstall takes out). */
export function ourCommands(text: string): string[] {
  const h = hooksMap(load(text));
  if (!h) return [];
  const l = lines(text);
  return oursIn(l, marks(l), h.map)
    .perPair.filter((p) => p.event !== OUTBOUND_KEY)
    .flatMap((p) => p.ours.map((o) => String(o.item.get('command'))));
}

/** Our items in `hooks.outbound` (the webhook transport's entry), each with whether all its lines carry MARK. */
export function ourOutbound(text: string): { item: YAMLMap; clean: boolean }[] {
  const h = hooksMap(load(text));
  if (!h) return [];
  const l = lines(text);
  return oursIn(l, marks(l), h.map).perPair.flatMap((p) => (p.event === OUTBOUND_KEY ? p.ours : []));
}

/** Each of our shell hook entries with its event (what doctor checks against the allowlist). */
export function ourShellEntries(text: string): { event: string; command: string }[] {
  const h = hooksMap(load(text));
  if (!h) return [];
  const l = lines(text);
  return oursIn(l, marks(l), h.map)
    .perPair.filter((p) => p.event !== undefined && p.event !== OUTBOUND_KEY)
    .flatMap((p) => p.ours.map((o) => ({ event: p.event!, command: String(o.item.get('command')) })));
}
