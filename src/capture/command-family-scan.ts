/**
 * Form 1 of the command-line credentials (`command-credentials.ts`): options
 * whose value is a credential in one command family only (`mysql -pPW`,
 * `curl -u user:PW`, …), counted only in a segment of the text that runs the
 * command. One left-to-right pass per segment, so the cost stays linear.
 */

import { COMMAND_FAMILIES, type CommandFamily, type CredentialOption } from './command-families.js';
import { bareValueEnd, escapeRegExp, MARKER_PREFIX, openingQuote, VARIABLE_REF_RE, type Range } from './patterns.js';

const FAMILIES_BY_COMMAND: ReadonlyMap<string, readonly CommandFamily[]> = (() => {
  const map = new Map<string, CommandFamily[]>();
  for (const family of COMMAND_FAMILIES) {
    for (const command of family.commands) map.set(command, [...(map.get(command) ?? []), family]);
  }
  return map;
})();

const namesPattern = (names: readonly string[]): RegExp =>
  new RegExp(
    [...names]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join('|'),
  );

/**
 * Loose, cheap tests before a text is split into segments and words: a
 * command that applies on its own, or (for the families behind a subcommand,
 * such as `docker … login`) the subcommand and a command both. A hit inside a
 * longer word only costs the exact word check that follows.
 */
const DIRECT_COMMAND_RE = namesPattern(COMMAND_FAMILIES.filter((f) => f.subcommand === undefined).flatMap((f) => f.commands));
const SUBCOMMAND_FAMILIES = COMMAND_FAMILIES.filter((f) => f.subcommand !== undefined);
const SUBCOMMAND_RE = namesPattern([...new Set(SUBCOMMAND_FAMILIES.map((f) => f.subcommand!))]);
const SUBCOMMAND_COMMAND_RE = namesPattern(SUBCOMMAND_FAMILIES.flatMap((f) => f.commands));

function mayNameACommand(text: string): boolean {
  return DIRECT_COMMAND_RE.test(text) || (SUBCOMMAND_RE.test(text) && SUBCOMMAND_COMMAND_RE.test(text));
}

/**
 * Segments of a command text: runs between newlines, `;`, `|`, `&`, backquotes,
 * parentheses, and the two-character escapes `\n` / `\r` of text that is
 * itself JSON-encoded (a tool result), so one command's options never scope
 * another's.
 */
const SEGMENT_RE = /(?<!\\)(?:[^\n\r;|&`()\\]|\\(?![nr]))+/g;

/** Words of a segment, with their offsets. */
const WORD_RE = /\S+/g;

/** The command a word names: quotes, `$(` and a directory stripped (`"/usr/bin/mysql` → `mysql`). */
function commandName(word: string): string {
  let start = 0;
  let end = word.length;
  while (start < end && '("\'$'.includes(word[start]!)) start++;
  while (end > start && '"\')'.includes(word[end - 1]!)) end--;
  const slash = word.lastIndexOf('/', end - 1);
  return word.slice(slash >= start ? slash + 1 : start, end);
}

/**
 * The range of a value that starts at `start` in `text` and whose word ends at
 * `wordEnd`: a quoted value (`"…"`, `'…'`, or JSON-escaped `\"…\"`) runs to
 * its closing quote (across spaces, up to `limit`), a bare value to the end of
 * the word or to a quote or JSON escape in it.
 */
function valueRange(text: string, start: number, wordEnd: number, limit: number): Range | undefined {
  if (start >= wordEnd) return undefined;
  const quote = openingQuote(text.slice(start, start + 2));
  if (quote !== '') {
    // the scan reads the value's words once: the caller skips them afterwards
    const first = start + quote.length;
    let close = first;
    while (close < limit && !text.startsWith(quote, close)) close++;
    return close > first ? [first, close] : undefined;
  }
  const end = bareValueEnd(text, start, wordEnd);
  return end > start ? [start, end] : undefined;
}

/** Apply an option's value shape (`user:secret`, `pass:secret`) to a value range. */
function secretPart(text: string, value: Range, option: CredentialOption): Range | undefined {
  let start = value[0];
  const end = value[1];
  const raw = text.slice(start, end);
  if (VARIABLE_REF_RE.test(raw) || text.startsWith(MARKER_PREFIX, start)) return undefined;
  if (option.valuePrefix !== undefined) {
    if (!raw.startsWith(option.valuePrefix)) return undefined;
    start += option.valuePrefix.length;
  }
  if (option.userSeparator !== undefined) {
    const sep = raw.indexOf(option.userSeparator);
    if (sep === -1) return undefined; // no password given: the tool prompts for it
    start = value[0] + sep + 1;
    if (text.startsWith(MARKER_PREFIX, start)) return undefined;
  }
  if (end <= start || VARIABLE_REF_RE.test(text.slice(start, end))) return undefined;
  return [start, end];
}

/** Whether a word is a cluster of short flags ending with this one (`-sSu` for `-u`). */
function endsCluster(word: string, flag: string): boolean {
  return flag.length === 2 && word.length > 2 && /^-[A-Za-z]+$/.test(word) && word.endsWith(flag[1]!);
}

/**
 * One segment, word by word. The state is a set of families (a command named
 * again adds nothing), so each word costs at most the options of all families
 * (a constant), and a value's words are skipped, not re-read: the scan stays linear.
 */
function scanSegment(text: string, segStart: number, segEnd: number, out: Range[]): void {
  const segment = text.slice(segStart, segEnd);
  if (!mayNameACommand(segment)) return;
  const words: Array<{ start: number; end: number; word: string }> = [];
  for (const m of segment.matchAll(WORD_RE)) {
    words.push({ start: segStart + m.index, end: segStart + m.index + m[0].length, word: m[0] });
  }
  const active = new Set<CommandFamily>();
  const pending = new Set<CommandFamily>();
  for (let i = 0; i < words.length; i++) {
    const { word, start, end } = words[i]!;
    const families = FAMILIES_BY_COMMAND.get(commandName(word));
    if (families !== undefined) {
      for (const f of families) (f.subcommand === undefined ? active : pending).add(f);
      continue;
    }
    let activated = false;
    for (const f of pending) {
      if (f.subcommand === word) {
        pending.delete(f);
        active.add(f);
        activated = true;
      }
    }
    if (activated) continue;
    // every active family reads the word its own way (`-u deploy,PW` is no curl credential, but an lftp
    // one): each reading that yields a secret counts, and the words any reading took as a value are skipped
    let valueEnd = -1;
    for (const family of active) {
      for (const o of family.options) {
        let value: Range | undefined;
        if (o.separate === true && (word === o.flag || endsCluster(word, o.flag))) {
          const next = words[i + 1];
          if (next !== undefined && !next.word.startsWith('-')) value = valueRange(text, next.start, next.end, segEnd);
        } else if (o.attached === true && word.startsWith(o.flag) && word.length > o.flag.length) {
          value = valueRange(text, start + o.flag.length, end, segEnd);
        }
        if (value === undefined) continue;
        const secret = secretPart(text, value, o);
        if (secret !== undefined) out.push(secret);
        valueEnd = Math.max(valueEnd, value[1]);
      }
    }
    while (i + 1 < words.length && words[i + 1]!.start < valueEnd) i++;
  }
}

/** Ranges of the credentials typed as options of a command family, appended to `out`. */
export function commandFamilyRanges(text: string, out: Range[]): void {
  if (!mayNameACommand(text)) return;
  for (const m of text.matchAll(SEGMENT_RE)) scanSegment(text, m.index, m.index + m[0].length, out);
}
