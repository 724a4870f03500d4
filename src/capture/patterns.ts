/**
 * What the redaction rules share: the markers, ranges, and the regex source of
 * the rules that find a credential by its name (`secret-shapes.ts`'s
 * assignment rules, `operator-rules.ts` and the command-line rules): one
 * spelling of "a separator" and "a value", so the rules agree on where a value ends.
 */

/** Marker that replaces a secret or credential (rules a and b). */
export const SECRET_MARKER = '[REDACTED:secret]';

/** Marker that replaces an email address or phone number (rule d). */
export const PII_MARKER = '[REDACTED:pii]';

/** Replacement markers start like this: a value that already is one is left alone. */
export const MARKER_PREFIX = '[REDACTED:';

/** A half-open character range `[start, end)` holding credential material. */
export type Range = readonly [start: number, end: number];

/** `s` as a literal inside a regular expression. */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** A shell variable reference, not a secret: `$PW`, `${PW}`, possibly quoted (JSON-escaped quotes too). */
export const VARIABLE_REF_RE = /^(?:\\?["'])?\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)(?:\\?["'])?$/;

/**
 * Separator between a name and its value: optional closing quote (escaped too,
 * as in JSON-encoded JSON: `\"password\": \"…\"`), then `=`, `:`, `:=` or `=>`.
 */
export const ASSIGNMENT_SEPARATOR = String.raw`(?:\\?["'])?\s*(?:=>|:=|[:=])\s*`;

/**
 * A value: a double- or single-quoted string, plain or JSON-escaped (`\"…\"`),
 * the closing quote optional and the value stopping at the line end; else the
 * next run of non-space characters (the §9.4 floor's `\S+`). Every form
 * consumes each character one way, and a quoted form always matches once its
 * opening quote is seen, so the engine never rescans the line.
 */
export const ASSIGNED_VALUE =
  String.raw`(?:\\"(?:[^\\\r\n]|\\[^"\r\n])*(?:\\")?|\\'(?:[^\\\r\n]|\\[^'\r\n])*(?:\\')?|` + String.raw`"(?:[^"\\\r\n]|\\.)*"?|'(?:[^'\\\r\n]|\\.)*'?|\S+)`;

/**
 * A value typed on a command line: quoted as in `ASSIGNED_VALUE`, else a bare
 * word that also ends at a quote or at a JSON escape (`\n`, `\t`, `\"`), so in
 * JSON-encoded text (a tool result) it stops where the next line or the
 * enclosing string does instead of swallowing them. (The §9.4 floor's own
 * `name=value` rule keeps `\S+`.)
 */
export const COMMAND_VALUE =
  String.raw`(?:\\"(?:[^\\\r\n]|\\[^"\r\n])*(?:\\")?|\\'(?:[^\\\r\n]|\\[^'\r\n])*(?:\\')?|` +
  String.raw`"(?:[^"\\\r\n]|\\.)*"?|'(?:[^'\\\r\n]|\\.)*'?|(?:[^\s"'\\]|\\(?![nrt"']))+)`;

/** Where a bare command-line value starting at `start` ends (see `COMMAND_VALUE`). */
export function bareValueEnd(text: string, start: number, limit: number): number {
  let i = start;
  while (i < limit) {
    const c = text[i]!;
    if (c === '"' || c === "'" || /\s/.test(c)) break;
    if (c === '\\' && 'nrt"\''.includes(text[i + 1] ?? '')) break;
    i++;
  }
  return i;
}

/** The quote a matched value opens with (`"`, `'`, `\"`, `\'`), or `''`. */
export function openingQuote(value: string): string {
  return /^\\?["']/.exec(value)?.[0] ?? '';
}

/**
 * Where a name match may start: not inside a word, except right after a JSON
 * escape (`\n`, `\r`, `\t`), where the text of the next line begins (the
 * escape's letter is then part of the match). One plain lookbehind, so the
 * engine's scan stays fast; an alternation of lookbehinds costs several times more.
 */
export const NAME_START = String.raw`(?<![A-Za-z0-9_$])(?:(?<=\\)[nrt])?`;
