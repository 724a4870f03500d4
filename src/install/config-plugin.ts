import { isAlias, isMap, isScalar, isSeq, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
import { applyInserts, lineEnd, lineOf, lines, lineStartAfter, type LineInsert, type Lines, type TextInsert } from './text-edits.js';
import {
  columnOf,
  ConfigRefused,
  contentEnd,
  CREATED_MARK,
  dashOffset,
  endsInBlockScalar,
  findPair,
  isNull,
  keyLine,
  keyName,
  load,
  MARK,
  marks,
  pairLines,
  range,
  referencedAnchors,
  WAS_PREFIX,
  type Marks,
} from './yaml-source.js';

/**
 * The plugin transport's edit of config.yaml: `hermes-aep` in `plugins.enabled` (Hermes loads a user plugin only
 * when its key is there). Same rules as the hooks edit (config-install.ts): only whole lines ending in MARK are
 * added; a value that must change (`plugins: ~`, `plugins: {}`, a one-line flow `enabled: [a, b]`) keeps its
 * original line as a `# replaced by hermes-aep: ` comment; uninstall (config-uninstall.ts) removes the marked
 * lines and restores the replaced ones, so every byte comes back. A name the user enabled themselves is left alone.
 */
export const PLUGIN_NAME = 'hermes-aep';

function pluginsPair(doc: Document): Pair | undefined {
  const root = doc.contents;
  return isMap(root) && !root.flow ? findPair(root, 'plugins') : undefined;
}

function names(node: unknown): unknown[] {
  return isSeq(node) ? node.items.map((i) => (isScalar(i) ? i.value : undefined)) : [];
}

/** `hermes-aep` is in `plugins.enabled` (ours or the user's own entry), and not in `plugins.disabled`. */
export function isPluginEnabled(text: string): boolean {
  const v = pluginsPair(load(text))?.value;
  return isMap(v) && names(v.get('enabled', true)).includes(PLUGIN_NAME) && !names(v.get('disabled', true)).includes(PLUGIN_NAME);
}

/** config.yaml holds lines install marked inside `plugins:` (the plugin transport's edit). */
export function hasPluginLines(text: string): boolean {
  const l = lines(text);
  return pluginKeysToKeep(load(text), l, marks(l)).ours;
}

/** `text` (nothing of ours in it: remove first) with `hermes-aep` added to `plugins.enabled`. */
export function planPluginEnable(text: string, create: boolean): string {
  const doc = load(text);
  const l = lines(text);
  const m = marks(l);
  const inserts: LineInsert[] = [];
  const inline: TextInsert[] = [];
  const sp = (n: number) => ' '.repeat(n);
  const item = (dash: number) => `${sp(dash)}- ${PLUGIN_NAME}  ${MARK}`;
  const enabledBlock = (col: number) => [`${sp(col)}enabled:  ${MARK}`, item(col + 2)];
  const pluginsBlock = (col: number) => [`${sp(col)}plugins:  ${MARK}`, ...enabledBlock(col + 2)];
  const replace = (a: number, b: number, replacement: string[]) => {
    for (let i = a; i <= b; i++) inline.push({ at: l.starts[i]!, text: WAS_PREFIX });
    inserts.push({ at: l.starts[b + 1] ?? text.length, lines: replacement, order: 0 });
  };
  const shared = referencedAnchors(doc);
  const own = (node: unknown, what: string) => {
    if (isAlias(node)) throw new ConfigRefused(`${what} is an alias; write it out to let install add to it`);
    const a = (node as { anchor?: string } | null)?.anchor;
    if (a && shared.has(a))
      throw new ConfigRefused(`${what} carries the anchor &${a}, which an alias reuses elsewhere; adding to it would change that place too`);
  };
  const root = doc.contents;
  const eofScalar = !/\n$/.test(text) && endsInBlockScalar(doc, text.length);
  let appendAt = m.docEnd !== undefined ? l.starts[lineOf(l, m.docEnd)]! : text.length;
  if (eofScalar && isMap(root) && !root.flow && appendAt === text.length) appendAt = l.starts[lineOf(l, range((root.items.at(-1) as Pair).key)![0])]!;

  const pair = pluginsPair(doc);
  const v = pair?.value;
  if (root === null) inserts.push({ at: appendAt, lines: pluginsBlock(0), order: 0 });
  else if (isMap(root) && root.flow) {
    if (root.items.length > 0)
      throw new ConfigRefused('config.yaml is one flow mapping ({...}) holding settings; write it in block style to let install edit it');
    const [a, b] = [lineOf(l, range(root)![0]), lineOf(l, Math.max(range(root)![1] - 1, range(root)![0]))];
    if (
      a !== b ||
      l.text
        .slice(l.starts[a], lineEnd(l, a))
        .trim()
        .replace(/\s*#.*$/, '') !== '{}'
    )
      throw new ConfigRefused('the empty mapping {} shares its line with other content');
    replace(a, b, pluginsBlock(0));
  } else if (!pair) {
    if (isMap(root) && root.items.some((p) => keyName(p) === '<<')) {
      const merged = doc.toJS({ maxAliasCount: -1 }) as Record<string, unknown> | null;
      if (merged && 'plugins' in merged) throw new ConfigRefused('plugins: comes into config.yaml through a merge key (<<: *...)');
    }
    inserts.push({ at: appendAt, lines: pluginsBlock(columnOf(l, range((root as YAMLMap).items[0]!.key)![0])), order: 0 });
  } else {
    own(v, 'plugins:');
    const col = columnOf(l, range(pair.key)![0]);
    if (isNull(v)) {
      const r = range(v);
      if (r && r[0] === r[1] && !(v as { anchor?: string }).anchor && !(v as { tag?: string }).tag)
        inserts.push({ at: l.starts[keyLine(l, pair, 'plugins:') + 1] ?? text.length, lines: enabledBlock(col + 2), order: 0 });
      else replace(...pairLines(l, pair, 'plugins:'), pluginsBlock(col));
    } else if (isMap(v) && v.flow) {
      if (v.items.length > 0)
        throw new ConfigRefused('plugins: is written in flow style ({...}) and holds settings; write it as a block to let install add to it');
      replace(...pairLines(l, pair, 'plugins:'), pluginsBlock(col));
    } else if (isMap(v)) planEnabled(l, v, { inserts, inline, item, enabledBlock, replace, own });
    else throw new ConfigRefused('plugins: must be a mapping (enabled:, disabled:, …)');
  }
  if (eofScalar && inserts.some((ins) => ins.at === text.length))
    throw new ConfigRefused(
      'config.yaml ends in a block scalar (| or >) without a final newline, right where install would add lines: end the file with a newline first',
    );
  if (create) inserts.push({ at: 0, lines: [CREATED_MARK], order: -1 });
  return applyInserts(l, inserts, inline);
}

interface EnabledPlan {
  inserts: LineInsert[];
  inline: TextInsert[];
  item(dash: number): string;
  enabledBlock(col: number): string[];
  replace(a: number, b: number, replacement: string[]): void;
  own(node: unknown, what: string): void;
}

function planEnabled(l: Lines, plugins: YAMLMap, p: EnabledPlan): void {
  if (plugins.items.some((x) => keyName(x) === '<<')) throw new ConfigRefused('plugins: uses a merge key (<<: *...); install cannot tell what it enables');
  if (names(plugins.get('disabled', true)).includes(PLUGIN_NAME))
    throw new ConfigRefused(`plugins.disabled lists ${PLUGIN_NAME} (Hermes would never load it): take it out of that list first, then run install again`);
  const pair = findPair(plugins, 'enabled');
  if (!pair) {
    p.inserts.push({ at: lineStartAfter(l, contentEnd(plugins)), lines: p.enabledBlock(columnOf(l, range(plugins.items[0]!.key)![0])), order: 1 });
    return;
  }
  const v = pair.value;
  p.own(v, 'plugins.enabled');
  const keyCol = columnOf(l, range(pair.key)![0]);
  if (names(v).includes(PLUGIN_NAME)) return;
  if (isNull(v)) {
    const r = range(v);
    if (r && r[0] === r[1] && !(v as { anchor?: string }).anchor && !(v as { tag?: string }).tag)
      p.inserts.push({ at: l.starts[keyLine(l, pair, 'plugins.enabled') + 1] ?? l.text.length, lines: [p.item(keyCol + 2)], order: 0 });
    else p.replace(...pairLines(l, pair, 'plugins.enabled'), p.enabledBlock(keyCol));
  } else if (isSeq(v) && v.flow) {
    // one line: keep it as a comment and write it again with our name added, marked
    const [a, b] = pairLines(l, pair, 'plugins.enabled');
    if (a !== b)
      throw new ConfigRefused('plugins.enabled is a flow list ([...]) over several lines; write it on one line or as a block to let install add to it');
    const last = (v.items as Node[]).at(-1);
    const at = last ? range(last)![1] : ((v.srcToken as { start?: { offset?: number } } | undefined)?.start?.offset ?? range(v)![0]) + 1;
    const end = range(v)![1];
    const line = l.text.slice(l.starts[a], at) + (last ? `, ${PLUGIN_NAME}` : PLUGIN_NAME) + l.text.slice(at, end);
    p.replace(a, b, [`${line}  ${MARK}`]);
  } else if (isSeq(v)) {
    const first = v.items[0] as Node | undefined;
    const dash = first ? columnOf(l, dashOffset(l.text, range(first)![0])) : keyCol + 2;
    p.inserts.push({ at: lineStartAfter(l, contentEnd(v)), lines: [p.item(dash)], order: 0 });
  } else throw new ConfigRefused('plugins.enabled must be a list of plugin names');
}

/**
 * Marked key lines (`plugins:`, `enabled:`) that still hold someone else's entries: uninstall keeps them and takes
 * only the mark (config-uninstall.ts), so a name the user added under our key stays enabled.
 */
export function pluginKeysToKeep(doc: Document, l: Lines, m: Marks): { keep: Set<number>; ours: boolean } {
  const keep = new Set<number>();
  const pair = pluginsPair(doc);
  if (!pair) return { keep, ours: false };
  const [first, last] = [lineOf(l, range(pair.key)![0]), lineOf(l, Math.max(contentEnd(pair.value ?? pair.key), range(pair.key)![1]))];
  const ours = [...m.marked.keys()].some((line) => line >= first && line <= last);
  if (!isMap(pair.value) || pair.value.flow) return { keep, ours };
  const markedOnly = (node: Node): boolean => {
    const r = range(node)!;
    return m.marked.has(lineOf(l, r[0]));
  };
  let othersUnderPlugins = false;
  for (const child of pair.value.items) {
    const kl = lineOf(l, range(child.key)![0]);
    if (keyName(child) === 'enabled' && m.marked.has(kl) && isSeq(child.value) && !child.value.flow) {
      const others = (child.value.items as Node[]).some((i) => !markedOnly(i));
      if (others) keep.add(kl);
      if (others) othersUnderPlugins = true;
    } else if (!m.marked.has(kl)) othersUnderPlugins = true;
  }
  const pl = lineOf(l, range(pair.key)![0]);
  if (m.marked.has(pl) && othersUnderPlugins) keep.add(pl);
  return { keep, ours };
}
