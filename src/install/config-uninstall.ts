import { isSeq, parseDocument, type Node, type YAMLSeq } from 'yaml';
import { applyDeletes, lineOf, lines, lineSpans } from './text-edits.js';
import { ConfigRefused, isNull, load, MARK, marks, range, WAS_PREFIX } from './yaml-source.js';
import { hooksMap, itemLines, oursIn, oursPredicate, type ConfigEdit } from './config-entries.js';
import { pluginKeysToKeep } from './config-plugin.js';

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
      if (seq?.flow) deletes.push(...flowRemovals(seq, oursPredicate(event)));
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
  // plugins: / enabled: lines we marked that still hold someone's entries keep everything but the mark
  const plugin = pluginKeysToKeep(doc, l, m);
  for (const line of plugin.keep) keptKeyLines.add(line);
  if (plugin.ours) changes.push(`plugins.enabled: remove hermes-aep`);
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
function flowRemovals(seq: YAMLSeq, isOurItem: (item: unknown) => boolean): [number, number][] {
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
