import { isMap, isSeq, parseDocument, YAMLMap, YAMLSeq, type Document } from 'yaml';
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

function load(text: string): Document {
  const doc = parseDocument(text.trim().length > 0 ? text : '{}\n');
  if (doc.errors.length > 0) throw new Error(`config.yaml is not valid YAML: ${doc.errors[0]?.message.split('\n')[0] ?? ''}`);
  if (doc.contents !== null && !isMap(doc.contents)) throw new Error('config.yaml must be a mapping at the top level');
  return doc;
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
  if (doc.contents === null) doc.contents = doc.createNode({}) as never;
  const root = doc.contents as unknown as YAMLMap;
  let hooks: unknown = root.get('hooks', true);
  if (hooks === undefined || hooks === null) {
    hooks = new YAMLMap();
    root.set('hooks', hooks);
  }
  if (!isMap(hooks)) throw new Error('hooks must be a mapping; leaving config.yaml untouched');
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
  return { text: doc.toString(), changed: changes.length > 0, changes };
}

/** Remove every entry this tool wrote; drop lists and the block only if we emptied them. */
export function removeHooks(text: string): ConfigEdit {
  const doc = load(text);
  const root = doc.contents as unknown as YAMLMap | null;
  const hooks = root?.get('hooks', true);
  const changes: string[] = [];
  if (!root || !isMap(hooks)) return { text, changed: false, changes };
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
  if ((hooks as YAMLMap).items.length === 0 && changes.length > 0) root.delete('hooks');
  return { text: changes.length > 0 ? doc.toString() : text, changed: changes.length > 0, changes };
}
