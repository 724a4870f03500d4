import { isAlias, isMap, isSeq, parseDocument, type Document, type Node, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';
import { REGISTERED_HOOKS } from '../hermes/envelope.js';
import { isOurCommand } from './our-command.js';
import { applyDeletes, applyInserts, lineEnd, lineOf, lines, lineSpans, lineStartAfter, type LineInsert, type Lines, type TextInsert } from './text-edits.js';
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

export { shlexQuote } from './shell-words.js';
export { isOurCommand, shimCommand } from './our-command.js';
export { ConfigRefused, CREATED_MARK, MARK, WAS_PREFIX } from './yaml-source.js';

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

/** What `install` writes for each registered event. */
export interface HookEntry {
  readonly command: string;
  readonly timeout: number;
}

export interface ConfigEdit {
  readonly text: string;
  readonly changed: boolean;
  /** one line per event touched, for --dry-run and the install report */
  readonly changes: string[];
  /** uninstall: the file was created by install and nothing else is left in it */
  readonly deleteFile?: boolean;
}

// ------------------------------------------------------------------ our entries in the file

function isOurItem(item: unknown): boolean {
  return isMap(item) && isOurCommand(item.get('command'));
}

interface OursInfo {
  /** per event pair: our items, and whether each is exactly what install writes (all lines marked / a flow item) */
  readonly perPair: { pair: Pair; event: string | undefined; ours: { item: YAMLMap; clean: boolean }[] }[];
}

function itemLines(l: Lines, item: Node): [number, number] {
  const r = range(item)!;
  const first = lineOf(l, dashOffset(l.text, r[0]));
  const last = lineOf(l, Math.max(lineStartAfter(l, contentEnd(item)) - 1, r[0]));
  return [first, last];
}

function oursIn(l: Lines, m: Marks, hooks: YAMLMap): OursInfo {
  const perPair: OursInfo['perPair'] = [];
  for (const pair of hooks.items) {
    const ours: { item: YAMLMap; clean: boolean }[] = [];
    if (isSeq(pair.value)) {
      const seq = pair.value;
      for (const item of seq.items) {
        if (!isOurItem(item)) continue;
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

function hooksMap(doc: Document): { pair: Pair; map: YAMLMap } | undefined {
  const root = doc.contents;
  if (!isMap(root) || root.flow) return undefined;
  const pair = findPair(root, 'hooks');
  return pair && isMap(pair.value) ? { pair, map: pair.value } : undefined;
}

/** Already exactly installed: one clean entry of ours per event with this command and timeout, none elsewhere. */
function isInstalled(text: string, entry: HookEntry, events: readonly string[]): boolean {
  const doc = load(text);
  const h = hooksMap(doc);
  if (!h) return false;
  const l = lines(text);
  const { perPair } = oursIn(l, marks(l), h.map);
  const winners = new Set(events.map((e) => perPair.filter((p) => p.event === e).pop()));
  for (const p of perPair) {
    if (!winners.has(p)) {
      if (p.ours.length > 0) return false;
      continue;
    }
    const [only, ...more] = p.ours;
    if (!only || more.length > 0 || !only.clean) return false;
    if (only.item.get('command') !== entry.command || Number(only.item.get('timeout')) !== entry.timeout) return false;
  }
  return winners.size === events.length && !winners.has(undefined);
}

/** The commands of our entries in a config (what uninstall takes out). */
export function ourCommands(text: string): string[] {
  const h = hooksMap(load(text));
  if (!h) return [];
  const l = lines(text);
  return oursIn(l, marks(l), h.map).perPair.flatMap((p) => p.ours.map((o) => String(o.item.get('command'))));
}

// ------------------------------------------------------------------ uninstall

/**
 * Remove what install added (and entries of ours an older install wrote
 * without marks), restore what it replaced; every other byte stays.
 */
export function removeHooks(text: string): ConfigEdit {
  const doc = load(text);
  const l = lines(text);
  const m = marks(l);
  const removeLines = new Set<number>();
  const keptKeyLines = new Set<number>();
  const deletes: [number, number][] = [];
  const changes: string[] = [];
  const h = hooksMap(doc);

  if (h) {
    const { perPair } = oursIn(l, m, h.map);
    let pairsLeft = 0;
    for (const { pair, event, ours } of perPair) {
      const seq = isSeq(pair.value) ? pair.value : undefined;
      const remaining = seq ? seq.items.length - ours.length : isNull(pair.value) ? 0 : 1;
      if (ours.length > 0) changes.push(`hooks.${event ?? '?'}: remove ${ours.length} hermes-aep entr${ours.length === 1 ? 'y' : 'ies'}`);
      if (seq?.flow) deletes.push(...flowRemovals(seq));
      else
        for (const { item } of ours) {
          const [a, b] = itemLines(l, item);
          for (let i = a; i <= b; i++) removeLines.add(i);
        }
      const kl = lineOf(l, range(pair.key)![0]);
      const legacy = ours.length > 0 && ours.every((o) => !o.clean) && !m.marked.has(kl);
      if (m.marked.has(kl)) {
        if (remaining === 0) removeLines.add(kl);
        else keptKeyLines.add(kl);
      } else if (legacy && remaining === 0 && seq && !seq.flow) {
        // an older install created this key without marks; take it with its entries, as that install's uninstall did
        removeLines.add(kl);
      }
      if (!removeLines.has(kl)) pairsLeft++;
    }
    const hl = lineOf(l, range(h.pair.key)![0]);
    const legacyOnly = !m.marked.has(hl) && perPair.length > 0 && pairsLeft === 0 && perPair.every((p) => p.ours.length > 0 && p.ours.every((o) => !o.clean));
    if (m.marked.has(hl) || legacyOnly) {
      if (pairsLeft === 0) removeLines.add(hl);
      else if (m.marked.has(hl)) keptKeyLines.add(hl);
    }
  }
  // any other line install marked is ours too (a user may have moved things around)
  for (const line of m.marked.keys()) if (!keptKeyLines.has(line)) removeLines.add(line);
  for (const line of m.created) removeLines.add(line);
  for (const line of keptKeyLines) {
    const at = m.marked.get(line)!;
    let from = at;
    while (from > 0 && (l.text[from - 1] === ' ' || l.text[from - 1] === '\t')) from--;
    deletes.push([from, at + MARK.length]);
  }
  // replaced lines come back when the marked key that replaced them goes; while it stays (it still
  // holds someone's hooks), or once it has lost its mark, they stay comments
  let restored = 0;
  for (const line of m.was) {
    let owner = line + 1;
    while (m.was.has(owner)) owner++;
    if (!m.marked.has(owner) || !removeLines.has(owner)) continue;
    deletes.push([l.starts[line]!, l.starts[line]! + WAS_PREFIX.length]);
    restored++;
  }
  if (restored > 0) changes.push('restore the lines install replaced');
  deletes.push(...lineSpans(l, removeLines));

  if (deletes.length === 0) return { text, changed: false, changes: [] };
  const out = applyDeletes(text, deletes);
  const deleteFile = m.created.size > 0 && out.replace(/^\uFEFF/, '') === '';
  if (!deleteFile) {
    const check = parseDocument(out, { version: '1.1', uniqueKeys: false });
    if (check.errors.length > 0)
      throw new ConfigRefused('removing the hermes-aep entries would leave config.yaml invalid (was it edited by hand around them?)');
  }
  if (changes.length === 0) changes.push('remove the lines marked "added by hermes-aep"');
  return { text: out, changed: out !== text || deleteFile, changes, ...(deleteFile ? { deleteFile } : {}) };
}

/**
 * Our items in a flow list, each with the separator install added before it
 * (or, first in the list, the one after it).
 */
function flowRemovals(seq: YAMLSeq): [number, number][] {
  const items = seq.items as Node[];
  const out: [number, number][] = [];
  let i = 0;
  while (i < items.length) {
    if (!isOurItem(items[i])) {
      i++;
      continue;
    }
    let j = i;
    while (j + 1 < items.length && isOurItem(items[j + 1])) j++;
    const prev = items[i - 1];
    const next = items[j + 1];
    if (prev) out.push([range(prev)![1], range(items[j])![1]]);
    else if (next) out.push([range(items[i])![0], range(next)![0]]);
    else out.push([range(items[i])![0], range(items[j])![1]]);
    i = j + 1;
  }
  return out;
}

// ------------------------------------------------------------------ install

/** A YAML scalar for the command: plain when that is unambiguous, else double-quoted (JSON is valid YAML). */
function yamlString(s: string, flow: boolean): string {
  if (!flow && /^\/[A-Za-z0-9_@%+=:,./' -]*$/.test(s) && !/ #|:( |$)|\s$/.test(s)) return s;
  return JSON.stringify(s);
}

interface Plan {
  readonly inserts: LineInsert[];
  readonly inline: TextInsert[];
}

function planInsert(text: string, entry: HookEntry, events: readonly string[], create: boolean): string {
  const doc = load(text);
  const l = lines(text);
  const m = marks(l);
  const plan: Plan = { inserts: [], inline: [] };
  const sp = (n: number) => ' '.repeat(n);
  const item = (dash: number) => [`${sp(dash)}- command: ${yamlString(entry.command, false)}  ${MARK}`, `${sp(dash)}  timeout: ${entry.timeout}  ${MARK}`];
  const eventBlock = (col: number, ev: string) => [`${sp(col)}${ev}:  ${MARK}`, ...item(col + 2)];
  const hooksBlock = (col: number) => [`${sp(col)}hooks:  ${MARK}`, ...events.flatMap((ev) => eventBlock(col + 2, ev))];
  const shared = referencedAnchors(doc);
  const notShared = (node: unknown, what: string) => {
    const a = (node as { anchor?: string } | null)?.anchor;
    if (a && shared.has(a))
      throw new ConfigRefused(`${what} carries the anchor &${a}, which an alias (*${a}) reuses elsewhere; adding to it would change that place too`);
  };
  /** comment out lines [a, b] and put `replacement` after them */
  const replace = (a: number, b: number, replacement: string[]) => {
    for (let i = a; i <= b; i++) plan.inline.push({ at: l.starts[i]!, text: WAS_PREFIX });
    plan.inserts.push({ at: l.starts[b + 1] ?? text.length, lines: replacement, order: 0 });
  };
  const root = doc.contents;
  // PyYAML gives a block scalar (| or >) that ends the file without a line break no final newline;
  // adding lines after it would add one to its value: nothing may go at such an end
  const eofScalar = !/\n$/.test(text) && endsInBlockScalar(doc, text.length);
  let appendAt = m.docEnd !== undefined ? l.starts[lineOf(l, m.docEnd)]! : text.length;
  if (eofScalar && isMap(root) && !root.flow && appendAt === text.length) {
    // a new hooks: block goes in before the last top-level key instead
    appendAt = l.starts[lineOf(l, range((root.items[root.items.length - 1] as Pair).key)![0])]!;
  }

  if (root === null) {
    plan.inserts.push({ at: appendAt, lines: hooksBlock(0), order: 0 });
  } else if (isMap(root) && root.flow) {
    if (root.items.length > 0)
      throw new ConfigRefused('config.yaml is one flow mapping ({...}) holding settings; write it in block style (one key per line) to let install edit it');
    const r = range(root)!;
    const a = lineOf(l, r[0]);
    const b = lineOf(l, Math.max(r[1] - 1, r[0]));
    if (l.text.slice(l.starts[a], r[0]).trim() !== '' || !/^[ \t]*(#.*)?$/.test(l.text.slice(r[1], lineEnd(l, b))))
      throw new ConfigRefused('the empty mapping {} shares its line with other content');
    replace(a, b, hooksBlock(0));
  } else if (isMap(root)) {
    if (root.items.some((p) => keyName(p) === '<<') && !findPair(root, 'hooks')) {
      const merged = doc.toJS({ maxAliasCount: -1 }) as Record<string, unknown> | null;
      if (merged && 'hooks' in merged)
        throw new ConfigRefused('hooks: comes into config.yaml through a merge key (<<: *...); install cannot add to it without overriding it');
    }
    const rootCol = columnOf(l, range((root.items[0] as Pair).key)![0]);
    const pair = findPair(root, 'hooks');
    const v = pair?.value;
    if (!pair) {
      plan.inserts.push({ at: appendAt, lines: hooksBlock(rootCol), order: 0 });
    } else if (isAlias(v)) {
      throw new ConfigRefused(`hooks: is an alias (*${v.source}); write the hooks out to let install add to them`);
    } else if (isNull(v)) {
      notShared(v, 'hooks:');
      const kl = keyLine(l, pair, 'hooks:');
      const col = columnOf(l, range(pair.key)![0]);
      const r = range(v);
      if (r && r[0] === r[1] && !(v as { anchor?: string }).anchor && !(v as { tag?: string }).tag) {
        plan.inserts.push({ at: l.starts[kl + 1] ?? text.length, lines: events.flatMap((ev) => eventBlock(col + 2, ev)), order: 0 });
      } else {
        const [a, b] = pairLines(l, pair, 'hooks:');
        replace(a, b, hooksBlock(col));
      }
    } else if (isMap(v) && v.flow) {
      if (v.items.length > 0)
        throw new ConfigRefused(
          'hooks: is written in flow style ({...}) and holds hooks already; write it as a block (one event per line) to let install add its entries',
        );
      notShared(v, 'hooks:');
      const [a, b] = pairLines(l, pair, 'hooks:');
      replace(a, b, hooksBlock(columnOf(l, range(pair.key)![0])));
    } else if (isMap(v)) {
      notShared(v, 'hooks:');
      planEvents(l, v, plan, events, entry, { item, eventBlock, replace, notShared });
    } else {
      throw new ConfigRefused('hooks: must be a mapping of event names to lists');
    }
  }
  if (eofScalar && plan.inserts.some((ins) => ins.at === text.length)) {
    throw new ConfigRefused(
      'config.yaml ends in a block scalar (| or >) without a final newline, right where install would add lines (that would change its value): end the file with a newline, then run install again',
    );
  }
  if (create) plan.inserts.push({ at: 0, lines: [CREATED_MARK], order: -1 });
  return applyInserts(l, plan.inserts, plan.inline);
}

interface Builders {
  item(dash: number): string[];
  eventBlock(col: number, ev: string): string[];
  replace(a: number, b: number, replacement: string[]): void;
  notShared(node: unknown, what: string): void;
}

function planEvents(l: Lines, hooks: YAMLMap, plan: Plan, events: readonly string[], entry: HookEntry, b: Builders): void {
  if (hooks.items.some((p) => keyName(p) === '<<'))
    throw new ConfigRefused('hooks: uses a merge key (<<: *...); install cannot tell which events it already defines');
  const col = columnOf(l, range((hooks.items[0] as Pair).key)![0]);
  const end = lineStartAfter(l, contentEnd(hooks));
  const missing: string[] = [];
  for (const ev of events) {
    const pair = findPair(hooks, ev);
    if (!pair) {
      missing.push(ev);
      continue;
    }
    const what = `hooks.${ev}`;
    const v = pair.value;
    const kl = keyLine(l, pair, what);
    const keyCol = columnOf(l, range(pair.key)![0]);
    if (isAlias(v)) throw new ConfigRefused(`${what} is an alias (*${v.source}); write its list out to let install add to it`);
    b.notShared(v, what);
    if (isNull(v)) {
      const r = range(v);
      if (r && r[0] === r[1] && !(v as { anchor?: string }).anchor && !(v as { tag?: string }).tag) {
        plan.inserts.push({ at: l.starts[kl + 1] ?? l.text.length, lines: b.item(keyCol + 2), order: 0 });
      } else {
        const [a, z] = pairLines(l, pair, what);
        b.replace(a, z, b.eventBlock(keyCol, ev));
      }
    } else if (isSeq(v) && v.flow) {
      const items = v.items as Node[];
      const flowItem = `{command: ${yamlString(entry.command, true)}, timeout: ${entry.timeout}}`;
      const last = items[items.length - 1];
      if (last) plan.inline.push({ at: range(last)![1], text: `, ${flowItem}` });
      else {
        const start = (v.srcToken as { start?: { offset?: number } } | undefined)?.start?.offset ?? range(v)![0];
        plan.inline.push({ at: start + 1, text: flowItem });
      }
    } else if (isSeq(v)) {
      const first = v.items[0] as Node | undefined;
      const dash = first ? columnOf(l, dashOffset(l.text, range(first)![0])) : keyCol + 2;
      plan.inserts.push({ at: lineStartAfter(l, contentEnd(v)), lines: b.item(dash), order: 0 });
    } else {
      throw new ConfigRefused(`${what} must be a list of hooks`);
    }
  }
  if (missing.length > 0) plan.inserts.push({ at: end, lines: missing.flatMap((ev) => b.eventBlock(col, ev)), order: 1 });
}

/**
 * Add (or refresh) our entry for each registered event. Idempotent: when the
 * file already holds exactly these entries, nothing changes. Any older entry
 * of ours is taken out first (exactly as uninstall would), then the new ones
 * go in; before returning, the result is proven to uninstall back to the
 * file without our entries, byte for byte.
 */
export function addHooks(text: string, entry: HookEntry, events: readonly string[] = REGISTERED_HOOKS, opts: { create?: boolean } = {}): ConfigEdit {
  if (isInstalled(text, entry, events)) return { text, changed: false, changes: [] };
  const before = removeHooks(text);
  const base = before.deleteFile ? '' : before.text;
  const create = Boolean(before.deleteFile || opts.create);
  const had = new Set(before.changes.map((c) => /^hooks\.([^:]+):/.exec(c)?.[1]).filter(Boolean));
  const out = planInsert(base, entry, events, create);
  const back = removeHooks(out);
  if ((back.deleteFile ? '' : back.text) !== base || Boolean(back.deleteFile) !== create || !isInstalled(out, entry, events)) {
    throw new ConfigRefused('install could not prove that uninstall would give this config.yaml back byte for byte (please report its shape)');
  }
  const changes = events.map((ev) => `hooks.${ev}: ${had.has(ev) ? 'refresh' : 'add'} ${entry.command} (timeout ${entry.timeout}s)`);
  return { text: out, changed: true, changes };
}
