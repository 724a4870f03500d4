import { z } from 'zod';
import { REGISTERED_HOOKS } from '../hermes/envelope.js';
import { isOurCommand } from './our-command.js';
import { jsonSpans, type JsonSpan } from './json-spans.js';
import { applyDeletes, lineOf, lines } from './text-edits.js';

/**
 * `$HERMES_HOME/shell-hooks-allowlist.json`, edited by splicing: install adds
 * one approval per event at the end of `approvals`, uninstall takes exactly
 * those bytes out again, every other byte (the user's approvals, other keys,
 * the layout Hermes wrote) stays. Hermes matches an approval on event + the
 * exact command string; `script_mtime_at_approval` is what its `hooks doctor`
 * compares with the script's mtime.
 */

/** A file install creates carries this key, so uninstall knows it may delete it again. */
export const CREATED_KEY = 'hermes_aep';
const CREATED_MISSING = 'created this file';
const CREATED_EMPTY = 'created this file; it was empty';
const skeleton = (note: string) => `{\n  "approvals": [],\n  "${CREATED_KEY}": "${note}"\n}\n`;

const rootSchema = z.object({ approvals: z.array(z.unknown()).optional() }).loose();
const approvalSchema = z.object({ event: z.string(), command: z.string(), script_mtime_at_approval: z.string().nullable().optional() }).loose();

export interface AllowlistEdit {
  readonly text: string;
  readonly changed: boolean;
  readonly changes: string[];
  /** uninstall: install created the file and nothing else is in it */
  readonly deleteFile?: boolean;
}

export class AllowlistRefused extends Error {
  override readonly name = 'AllowlistRefused';
  constructor(reason: string) {
    super(`shell-hooks-allowlist.json ${reason}; leaving it untouched`);
  }
}

interface Parsed {
  readonly root: Extract<JsonSpan, { kind: 'object' }>;
  /** the `approvals` list Hermes reads (the last one, like json.loads) */
  readonly list?: Extract<JsonSpan, { kind: 'array' }>;
  readonly values: unknown[];
}

function parse(text: string): Parsed {
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    throw new AllowlistRefused('is not valid JSON');
  }
  if (!rootSchema.safeParse(raw).success || Array.isArray(raw)) throw new AllowlistRefused('must be an object whose "approvals" is a list');
  const root = jsonSpans(text) as Parsed['root'];
  const member = root.members.filter((m) => m.key === 'approvals').pop();
  const list = member?.value.kind === 'array' ? member.value : undefined;
  const values = list ? list.elements.map((e) => JSON.parse(text.slice(e.start, e.end)) as unknown) : [];
  return { root, ...(list ? { list } : {}), values };
}

function isOurs(v: unknown): boolean {
  const p = approvalSchema.safeParse(v);
  return p.success && isOurCommand(p.data.command);
}

/** One approval, on one line, in the key order Hermes records them. */
function render(event: string, command: string, approvedAt: string, scriptMtime: string | null): string {
  const o = { event, command, approved_at: approvedAt, script_mtime_at_approval: scriptMtime };
  return `{${Object.entries(o)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(', ')}}`;
}

/** Our approvals out, each with the separator install added before it (or, first in the list, the one after it). */
function removeOurs(text: string): { text: string; removed: number } {
  const { list, values } = parse(text);
  if (!list) return { text, removed: 0 };
  const els = list.elements;
  const deletes: [number, number][] = [];
  let removed = 0;
  for (let i = 0; i < els.length;) {
    if (!isOurs(values[i])) {
      i++;
      continue;
    }
    let j = i;
    while (j + 1 < els.length && isOurs(values[j + 1])) j++;
    removed += j - i + 1;
    const blankLine = /^\r?\n[ \t]*$/;
    if (i > 0) deletes.push([els[i - 1]!.end, els[j]!.end]);
    else if (j + 1 < els.length) deletes.push([els[i]!.start, els[j + 1]!.start]);
    else if (blankLine.test(text.slice(list.start + 1, els[i]!.start)) && blankLine.test(text.slice(els[j]!.end, list.end - 1))) {
      // a list of only ours, one per line (how install fills an empty `[]`, and how Hermes rewrites it): back to `[]`
      deletes.push([list.start + 1, list.end - 1]);
    } else deletes.push([els[i]!.start, els[j]!.end]);
    i = j + 1;
  }
  return { text: applyDeletes(text, deletes), removed };
}

function insert(text: string, items: readonly string[]): string {
  const { root, list } = parse(text);
  const l = lines(text);
  const col = (offset: number) => offset - l.starts[lineOf(l, offset)]!;
  const sameLine = (a: number, b: number) => lineOf(l, a) === lineOf(l, b);
  const at = (offset: number, s: string) => text.slice(0, offset) + s + text.slice(offset);
  const member = root.members.filter((m) => m.key === 'approvals').pop();
  if (member && !list) throw new AllowlistRefused('has an "approvals" that is not a list');
  if (!list) {
    // an object without approvals: add the member (Hermes itself always writes one)
    const last = root.members[root.members.length - 1];
    const pretty = last ? !sameLine(root.start, last.start) : false;
    const sep = pretty ? `,${l.eol}${' '.repeat(col(last!.start))}` : ', ';
    const body = `"approvals": [${items.join(', ')}]`;
    return last ? at(last.value.end, sep + body) : at(root.start + 1, body);
  }
  const els = list.elements;
  const first = els[0];
  if (first) {
    const sep = sameLine(list.start, first.start) ? ', ' : `,${l.eol}${' '.repeat(col(first.start))}`;
    return at(els[els.length - 1]!.end, items.map((s) => sep + s).join(''));
  }
  if (sameLine(root.start, member!.start) || list.end !== list.start + 2) return at(list.start + 1, items.join(', '));
  // `[]` in a pretty file: one approval per line, as Hermes lays them out
  const indent = `${l.eol}${' '.repeat(col(member!.start) + 2)}`;
  return at(list.start + 1, `${indent}${items.join(`,${indent}`)}${l.eol}${' '.repeat(col(member!.start))}`);
}

/**
 * Record consent for our command on each event so Hermes registers the hooks
 * without a TTY prompt. `text` undefined: the file does not exist (it is
 * created, marked so uninstall can delete it). Already exactly recorded
 * (same command, same script mtime): nothing changes.
 */
export function addApprovals(
  text: string | undefined,
  command: string,
  approvedAt: string,
  scriptMtime: string | null,
  events: readonly string[] = REGISTERED_HOOKS,
): AllowlistEdit {
  const working = text === undefined ? skeleton(CREATED_MISSING) : text.trim() === '' ? skeleton(CREATED_EMPTY) : text;
  const { values } = parse(working);
  const ours = values.filter(isOurs).map((v) => approvalSchema.parse(v));
  const exact = events.every(
    (e) => ours.filter((o) => o.event === e && o.command === command && (o.script_mtime_at_approval ?? null) === scriptMtime).length === 1,
  );
  if (text !== undefined && exact && ours.length === events.length) return { text, changed: false, changes: [] };
  const base = removeOurs(working);
  const out = insert(
    base.text,
    events.map((e) => render(e, command, approvedAt, scriptMtime)),
  );
  const changes = events.map((e) => `allowlist: approve ${e}`);
  if (base.removed > 0) changes.push(`allowlist: replace ${base.removed} earlier hermes-aep approval${base.removed === 1 ? '' : 's'}`);
  return { text: out, changed: true, changes };
}

/** Take our approvals out again; a file install created goes when nothing else is in it. */
export function removeApprovals(text: string | undefined): AllowlistEdit {
  if (text === undefined || text.trim() === '') return { text: text ?? '', changed: false, changes: [] };
  const { text: out, removed } = removeOurs(text);
  if (out === skeleton(CREATED_MISSING))
    return { text: '', changed: true, deleteFile: true, changes: [`allowlist: remove ${removed} hermes-aep approvals and the file install created`] };
  if (out === skeleton(CREATED_EMPTY))
    return { text: '', changed: true, changes: [`allowlist: remove ${removed} hermes-aep approvals (the file was empty before install)`] };
  if (removed === 0) return { text, changed: false, changes: [] };
  return { text: out, changed: true, changes: [`allowlist: remove ${removed} hermes-aep approval${removed === 1 ? '' : 's'}`] };
}
