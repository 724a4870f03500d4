/**
 * Reading Hermes's hook list without importing Hermes (0.21 needs Python 3.14, 0.18 needs < 3.14): the string names of
 * a module-level set literal such as `VALID_HOOKS: Set[str] = {…}` in `hermes_cli/plugins.py`, whether written one
 * name per line (0.18.2) or several per line with comments between them (0.21). Pure text work; never throws.
 */

/** What a set literal held: its string names in order, and anything in it that was not a plain string (kept out of `names`). */
export interface SetLiteral {
  readonly names: readonly string[];
  /** elements that are no string literal (a name, a splat, a call): the list may be incomplete */
  readonly other: number;
}

export type SetRead = { readonly ok: true; readonly value: SetLiteral } | { readonly ok: false; readonly problem: string };

const OPEN: Readonly<Record<string, string>> = { '{': '}', '[': ']', '(': ')' };

/** `name` assigned at the start of a line (an annotation allowed), then `set(`/`frozenset(` around the literal, or not. */
function literalStart(source: string, name: string): number | undefined {
  const m = new RegExp(`^${name}\\b[^=\\n]*=[ \\t]*(?:(?:frozenset|set)\\([ \\t]*)?`, 'm').exec(source);
  if (!m) return undefined;
  return m.index + m[0].length;
}

/** The end of a quoted string starting at `i` (the quote), or -1 when it never closes on its line. */
function stringEnd(source: string, i: number): number {
  const quote = source[i]!;
  for (let j = i + 1; j < source.length; j++) {
    const c = source[j]!;
    if (c === '\\') j++;
    else if (c === quote) return j;
    else if (c === '\n') return -1;
  }
  return -1;
}

/**
 * The set literal assigned to `name` in a Python module's text: its string elements (adjacent literals joined, as
 * Python joins them), comments and blank lines skipped. A problem (the name not assigned, no literal after it, the
 * literal never closing) is said in words.
 */
export function readSetLiteral(source: string, name: string): SetRead {
  const start = literalStart(source, name);
  if (start === undefined) return { ok: false, problem: `no \`${name} = {…}\` assignment` };
  const open = source[start] ?? '';
  const close = OPEN[open];
  if (!close) return { ok: false, problem: `\`${name}\` is not assigned a set literal` };
  const names: string[] = [];
  let other = 0;
  let current: string | undefined; // the element being read, when it is made of string literals only
  let odd = false; // the element being read has something that is not a string literal
  let depth = 0;
  const endElement = () => {
    if (odd) other++;
    else if (current !== undefined) names.push(current);
    current = undefined;
    odd = false;
  };
  for (let i = start + 1; i < source.length; i++) {
    const c = source[i]!;
    if (c === '#') {
      const nl = source.indexOf('\n', i);
      if (nl < 0) break;
      i = nl;
    } else if (c === '"' || c === "'") {
      const end = stringEnd(source, i);
      if (end < 0) return { ok: false, problem: `a string in \`${name}\` never closes` };
      if (depth === 0) current = (current ?? '') + source.slice(i + 1, end);
      i = end;
    } else if (/\s/.test(c)) {
      continue;
    } else if (depth === 0 && c === ',') {
      endElement();
    } else if (depth === 0 && c === close) {
      endElement();
      return { ok: true, value: { names, other } };
    } else {
      // a name, a splat, a call, a prefixed string: not a plain literal
      if (c in OPEN) depth++;
      else if (c === '}' || c === ']' || c === ')') depth = Math.max(0, depth - 1);
      odd = true;
    }
  }
  return { ok: false, problem: `\`${name}\` never closes` };
}

/** `__version__ = "X.Y.Z"` in `hermes_cli/__init__.py`'s text (an annotation allowed), or undefined. */
export function readVersion(source: string): string | undefined {
  return /^__version__\b[^=\n]*=[ \t]*(["'])([^"'\n]{1,64})\1/m.exec(source)?.[2];
}
