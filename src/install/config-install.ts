import { isAlias, isMap, isSeq, type Node, type Pair, type YAMLMap } from 'yaml';
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
} from './yaml-source.js';
import { timeoutFor, type HookEntry } from './config-entries.js';

/** A YAML scalar for the command: plain when that is unambiguous, else double-quoted (JSON is valid YAML). */
function yamlString(s: string, flow: boolean): string {
  if (!flow && /^\/[A-Za-z0-9_@%+=:,./' -]*$/.test(s) && !/ #|:( |$)|\s$/.test(s)) return s;
  return JSON.stringify(s);
}

interface Plan {
  readonly inserts: LineInsert[];
  readonly inline: TextInsert[];
}

/** One key install adds an item under in `hooks:` (an event's shell hook, or `outbound`'s webhook entry). */
export interface HooksItem {
  readonly key: string;
  /** the item's lines as a block list item at dash column `dash`, each ending in MARK */
  block(dash: number): string[];
  /** the same item in flow style, for a flow list (`key: [...]`) */
  readonly flow: string;
}

/** The shell hook's item for each of `events`. */
export function shellItems(entry: HookEntry, events: readonly string[]): HooksItem[] {
  return events.map((ev) => ({
    key: ev,
    block: (dash: number) => [
      `${' '.repeat(dash)}- command: ${yamlString(entry.command, false)}  ${MARK}`,
      `${' '.repeat(dash)}  timeout: ${timeoutFor(entry, ev)}  ${MARK}`,
    ],
    flow: `{command: ${yamlString(entry.command, true)}, timeout: ${timeoutFor(entry, ev)}}`,
  }));
}

/** `text` with install's lines for `items` added (nothing of ours may be in it: remove first). */
export function planInsert(text: string, items: readonly HooksItem[], create: boolean): string {
  const doc = load(text);
  const l = lines(text);
  const m = marks(l);
  const plan: Plan = { inserts: [], inline: [] };
  const sp = (n: number) => ' '.repeat(n);
  const eventBlock = (col: number, it: HooksItem) => [`${sp(col)}${it.key}:  ${MARK}`, ...it.block(col + 2)];
  const hooksBlock = (col: number) => [`${sp(col)}hooks:  ${MARK}`, ...items.flatMap((it) => eventBlock(col + 2, it))];
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
        plan.inserts.push({ at: l.starts[kl + 1] ?? text.length, lines: items.flatMap((it) => eventBlock(col + 2, it)), order: 0 });
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
      planEvents(l, v, plan, items, { eventBlock, replace, notShared });
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
  eventBlock(col: number, it: HooksItem): string[];
  replace(a: number, b: number, replacement: string[]): void;
  notShared(node: unknown, what: string): void;
}

function planEvents(l: Lines, hooks: YAMLMap, plan: Plan, items: readonly HooksItem[], b: Builders): void {
  if (hooks.items.some((p) => keyName(p) === '<<'))
    throw new ConfigRefused('hooks: uses a merge key (<<: *...); install cannot tell which events it already defines');
  const col = columnOf(l, range((hooks.items[0] as Pair).key)![0]);
  const end = lineStartAfter(l, contentEnd(hooks));
  const missing: HooksItem[] = [];
  for (const it of items) {
    const ev = it.key;
    const pair = findPair(hooks, ev);
    if (!pair) {
      missing.push(it);
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
        plan.inserts.push({ at: l.starts[kl + 1] ?? l.text.length, lines: it.block(keyCol + 2), order: 0 });
      } else {
        const [a, z] = pairLines(l, pair, what);
        b.replace(a, z, b.eventBlock(keyCol, it));
      }
    } else if (isSeq(v) && v.flow) {
      const seqItems = v.items as Node[];
      const last = seqItems[seqItems.length - 1];
      if (last) plan.inline.push({ at: range(last)![1], text: `, ${it.flow}` });
      else {
        const start = (v.srcToken as { start?: { offset?: number } } | undefined)?.start?.offset ?? range(v)![0];
        plan.inline.push({ at: start + 1, text: it.flow });
      }
    } else if (isSeq(v)) {
      const first = v.items[0] as Node | undefined;
      const dash = first ? columnOf(l, dashOffset(l.text, range(first)![0])) : keyCol + 2;
      plan.inserts.push({ at: lineStartAfter(l, contentEnd(v)), lines: it.block(dash), order: 0 });
    } else {
      throw new ConfigRefused(`${what} must be a list of ${ev === 'outbound' ? 'webhooks' : 'hooks'}`);
    }
  }
  if (missing.length > 0) plan.inserts.push({ at: end, lines: missing.flatMap((it) => b.eventBlock(col, it)), order: 1 });
}
