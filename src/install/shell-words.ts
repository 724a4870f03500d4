/**
 * The hook command as Hermes reads it: `shlex.split` (POSIX mode), then run
 * without a shell. Quote so it splits back to exactly our argv; split to
 * recognise a command this tool wrote.
 */

/** Quote one argv element the way Python's shlex.split reads it back. */
export function shlexQuote(s: string): string {
  if (s.length > 0 && /^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'"'"'`)}'`;
}

export function shlexJoin(argv: readonly string[]): string {
  return argv.map(shlexQuote).join(' ');
}

/** POSIX shlex.split (no comments); undefined when quotes do not close. */
export function shlexSplit(s: string): string[] | undefined {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === "'") {
      const end = s.indexOf("'", i + 1);
      if (end === -1) return undefined;
      cur += s.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      inWord = true;
      let j = i + 1;
      for (; j < s.length && s[j] !== '"'; j++) {
        if (s[j] === '\\' && j + 1 < s.length && '\\"$`\n'.includes(s[j + 1]!)) j++;
        cur += s.charAt(j);
      }
      if (j >= s.length) return undefined;
      i = j;
    } else if (c === '\\') {
      if (i + 1 >= s.length) return undefined;
      cur += s.charAt(++i);
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) out.push(cur);
  return out;
}
