import { Document, isMap, isScalar, isSeq, Pair, parseDocument, Scalar, YAMLMap, YAMLSeq } from 'yaml';
import { REGISTERED_HOOKS } from '../hermes/envelope.js';

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
}

/** Quote one argv element the way Python's shlex.split reads it back. */
export function shlexQuote(s: string): string {
  if (s.length > 0 && /^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'"'"'`)}'`;
}

/**
 * The hook command: absolute node + the absolute shim file, so Hermes's PATH
 * does not matter. The shim file is the fast launcher of `hermes-aep hook`.
 */
export function shimCommand(nodePath: string, shimPath: string): string {
  return [nodePath, shimPath].map(shlexQuote).join(' ');
}

/** An entry this tool wrote (the shim file, or the `cli.js hook` form), whatever the install dir. */
export function isOurCommand(command: unknown): boolean {
  if (typeof command !== 'string') return false;
  const c = command.trim();
  return /(^|[\s'/])dist\/src\/shim\/hook\.cjs'?$/.test(c) || /(^|[\s'/])dist\/src\/cli\.js'? hook$/.test(c);
}

/** Hermes reads config.yaml with PyYAML: YAML 1.1, duplicate keys allowed (the last wins). */
function load(text: string): Document {
  const doc = parseDocument(text.trim().length > 0 ? text : '{}\n', { version: '1.1', uniqueKeys: false });
  if (doc.errors.length > 0) throw new Error(`config.yaml is not valid YAML: ${doc.errors[0]?.message.split('\n')[0] ?? ''}`);
  if (doc.contents !== null && !isMap(doc.contents)) throw new Error('config.yaml must be a mapping at the top level');
  if (isMap(doc.contents) && (doc.contents as YAMLMap).flow) throw new Error('config.yaml is one flow mapping ({...}); write it in block style to let install edit it');
  return doc;
}

interface HooksBlock {
  /** where the top-level `hooks:` pair sits in the original text, if it exists */
  readonly range?: readonly [number, number];
  readonly pair?: Pair;
}

/** The last top-level `hooks` pair (PyYAML's winner among duplicates) and its source range. */
function hooksBlock(doc: Document): HooksBlock {
  const root = doc.contents as YAMLMap | null;
  const pair = root?.items.filter((p) => isScalar(p.key) && p.key.value === 'hooks').pop() as Pair | undefined;
  const start = (pair?.key as Scalar | undefined)?.range?.[0];
  const end = (pair?.value as { range?: number[] } | undefined)?.range?.[1] ?? (pair?.key as Scalar | undefined)?.range?.[1];
  return pair && start !== undefined && end !== undefined ? { pair, range: [start, end] } : {};
}

/**
 * Splice a re-rendered `hooks:` block into the ORIGINAL text: every byte
 * outside the block stays exactly as the user wrote it (a full YAML round trip
 * would reformat values PyYAML reads differently, like `0755` or `1e3`).
 */
function splice(text: string, block: HooksBlock, hooks: YAMLMap | undefined): string {
  let rendered = '';
  if (hooks && hooks.items.length > 0) {
    const out = new Document(null, { version: '1.1' });
    const map = new YAMLMap();
    map.items.push(block.pair ?? new Pair(new Scalar('hooks'), hooks));
    if (block.pair) block.pair.value = hooks;
    out.contents = map as never;
    rendered = out.toString({ lineWidth: 0 });
  }
  if (block.range) {
    const [start, end] = block.range;
    const rest = text.slice(end);
    return text.slice(0, start) + rendered + (rendered && rest && !rest.startsWith('\n') && !text.slice(start, end).endsWith('\n') ? '\n' : '') + rest;
  }
  if (!rendered) return text;
  return text + (text.length === 0 || text.endsWith('\n') ? '' : '\n') + rendered;
}

function entriesOf(hooks: YAMLMap, event: string): YAMLSeq {
  const existing = hooks.get(event, true);
  if (existing === undefined || existing === null) {
    const seq = new YAMLSeq();
    hooks.set(event, seq);
    return seq;
  }
  if (!isSeq(existing)) throw new Error(`hooks.${event} must be a list; leaving config.yaml untouched`);
  return existing as YAMLSeq;
}

/**
 * Add (or refresh) our entry for each registered event, keeping every other
 * key, comment and hook the user has. Idempotent: a second run changes nothing.
 */
export function addHooks(text: string, entry: HookEntry, events: readonly string[] = REGISTERED_HOOKS): ConfigEdit {
  const doc = load(text);
  const block = hooksBlock(doc);
  let hooks: unknown = block.pair?.value;
  if (hooks === undefined || hooks === null || (isScalar(hooks) && hooks.value === null)) hooks = new YAMLMap();
  if (!isMap(hooks)) throw new Error('hooks must be a mapping; leaving config.yaml untouched');
  if ((hooks as YAMLMap).flow) (hooks as YAMLMap).flow = false;
  const changes: string[] = [];
  for (const event of events) {
    const seq = entriesOf(hooks as YAMLMap, event);
    const ours = seq.items.filter((it) => isMap(it) && isOurCommand((it as YAMLMap).get('command')));
    const current = ours.find(
      (it) => (it as YAMLMap).get('command') === entry.command && Number((it as YAMLMap).get('timeout')) === entry.timeout,
    );
    if (current && ours.length === 1) continue;
    seq.items = seq.items.filter((it) => !ours.includes(it));
    seq.items.push(doc.createNode({ command: entry.command, timeout: entry.timeout }));
    changes.push(`hooks.${event}: ${ours.length > 0 ? 'refresh' : 'add'} ${entry.command} (timeout ${entry.timeout}s)`);
  }
  if (changes.length === 0) return { text, changed: false, changes };
  return { text: splice(text, block, hooks as YAMLMap), changed: true, changes };
}

/** Remove every entry this tool wrote; drop lists and the block only if we emptied them. */
export function removeHooks(text: string): ConfigEdit {
  const doc = load(text);
  const block = hooksBlock(doc);
  const hooks = block.pair?.value;
  const changes: string[] = [];
  if (!isMap(hooks)) return { text, changed: false, changes };
  for (const pair of [...(hooks as YAMLMap).items]) {
    const event = String((pair.key as { value?: unknown })?.value ?? pair.key);
    if (!isSeq(pair.value)) continue;
    const seq = pair.value as YAMLSeq;
    const before = seq.items.length;
    seq.items = seq.items.filter((it) => !(isMap(it) && isOurCommand((it as YAMLMap).get('command'))));
    if (seq.items.length === before) continue;
    changes.push(`hooks.${event}: remove ${before - seq.items.length} hermes-aep entr${before - seq.items.length === 1 ? 'y' : 'ies'}`);
    if (seq.items.length === 0) (hooks as YAMLMap).delete(pair.key);
  }
  if (changes.length === 0) return { text, changed: false, changes };
  return { text: splice(text, block, (hooks as YAMLMap).items.length > 0 ? (hooks as YAMLMap) : undefined), changed: true, changes };
}
