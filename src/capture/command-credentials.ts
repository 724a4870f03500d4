/**
 * Credentials typed on a command line, for rule (a) of the §9.4 pipeline:
 * the forms a secret scanner built for files does not see, because their
 * shape is given by the command, not by the value.
 *
 * 1. Options whose value is a credential in one command family only
 *    (`mysql -pPW`, `curl -u user:PW`, `sshpass -p PW`, `docker login -p PW`,
 *    …): the table `COMMAND_FAMILIES`. `-p` is a password only where the
 *    command says so (`ssh -p 22`, `mkdir -p`, `docker run -p 8080:80` are
 *    not), so these options count only in a segment of the text (a line, or a
 *    part between `;`, `|`, `&`, backquotes, parentheses) that runs the command.
 * 2. Long options named for a credential, in any command: `--password PW`,
 *    `--passwd=PW`, `--token PW`, `--api-key PW`, `--client-secret PW`, …,
 *    and the single-dash `-password PW` some tools use.
 * 3. Environment-style assignments whose NAME ends like a credential
 *    (`MY_DB_PW=…`, `SMTP_PASS=…`, `DEPLOY_KEY=…`) beyond the words the
 *    pipeline's general assignment rule already knows.
 *
 * Everything here returns ranges; the pipeline replaces them. Each scan is one
 * left-to-right pass (regexes whose every start is anchored after a boundary
 * and whose quantified parts cannot split the same text two ways), so the cost
 * stays linear in the input.
 */

import { ASSIGNMENT_SEPARATOR, COMMAND_VALUE, bareValueEnd, openingQuote } from './patterns.js';

/** A half-open character range `[start, end)` holding credential material. */
export type Range = readonly [start: number, end: number];

/** Replacement markers start like this: a value that already is one is left alone. */
const MARKER_PREFIX = '[REDACTED:';

/** One option of a command family whose value is (or ends with) a credential. */
export interface CredentialOption {
  /** the option as typed: `-p`, `--user`, `-storepass` */
  readonly flag: string;
  /** the value glued to the option: `-pPW`, `--user=ops:PW` (then `flag` ends with `=`) */
  readonly attached?: boolean;
  /** the value is the next word: `-p PW` (a short flag may also end a cluster: `-sSu ops:PW`) */
  readonly separate?: boolean;
  /** the value is `user<sep>secret`: only what follows the first separator is secret */
  readonly userSeparator?: ':' | ',' | '%';
  /** the value is `<prefix>secret` (openssl `pass:`): other values (`env:NAME`, `file:…`) are references */
  readonly valuePrefix?: string;
}

/** Commands that take a credential as the value of some option. */
export interface CommandFamily {
  readonly name: string;
  readonly commands: readonly string[];
  /** the family applies only once this word follows the command (`docker … login`) */
  readonly subcommand?: string;
  readonly options: readonly CredentialOption[];
}

const MYSQL_COMMANDS = [
  'mysql',
  'mysqldump',
  'mysqladmin',
  'mysqlimport',
  'mysqlshow',
  'mysqlcheck',
  'mysqlpump',
  'mysqlslap',
  'mysqlbinlog',
  'mysqlsh',
  'mariadb',
  'mariadb-dump',
  'mariadb-admin',
  'mariadb-import',
  'mariadb-show',
  'mariadb-check',
  'mariadb-slap',
  'mariadb-binlog',
];

const userPass = (sep: ':' | ',' | '%', ...flags: string[]): CredentialOption[] =>
  flags.flatMap((flag) => [
    { flag, separate: true, userSeparator: sep },
    { flag: flag.startsWith('--') ? `${flag}=` : flag, attached: true, userSeparator: sep },
  ]);

/** The command families and their credential options (data: extend here). */
export const COMMAND_FAMILIES: readonly CommandFamily[] = [
  // `-p` takes no separate value in the MySQL clients (`-p db` prompts, and `db` is the database)
  { name: 'mysql', commands: MYSQL_COMMANDS, options: [{ flag: '-p', attached: true }] },
  { name: 'sshpass', commands: ['sshpass'], options: [{ flag: '-p', attached: true, separate: true }] },
  { name: 'curl', commands: ['curl'], options: userPass(':', '-u', '--user', '-U', '--proxy-user') },
  { name: 'redis', commands: ['redis-cli', 'redis-benchmark'], options: [{ flag: '-a', separate: true }] },
  {
    name: 'mongodb',
    commands: ['mongo', 'mongosh', 'mongodump', 'mongorestore', 'mongoexport', 'mongoimport', 'mongostat', 'mongotop', 'mongofiles'],
    options: [{ flag: '-p', attached: true, separate: true }],
  },
  {
    name: 'registry login',
    commands: ['docker', 'podman', 'nerdctl', 'buildah', 'skopeo', 'helm', 'oras', 'crane', 'regctl', 'az'],
    subcommand: 'login',
    options: [{ flag: '-p', attached: true, separate: true }],
  },
  { name: 'sql server', commands: ['sqlcmd', 'bcp', 'osql', 'isql'], options: [{ flag: '-P', attached: true, separate: true }] },
  {
    name: 'ldap',
    commands: ['ldapsearch', 'ldapadd', 'ldapmodify', 'ldapdelete', 'ldappasswd', 'ldapwhoami', 'ldapcompare', 'ldapmodrdn'],
    options: [{ flag: '-w', separate: true }],
  },
  { name: 'zip', commands: ['zip', 'unzip', 'zipcloak'], options: [{ flag: '-P', separate: true }] },
  { name: '7z', commands: ['7z', '7za', '7zr', '7zz', 'rar', 'unrar'], options: [{ flag: '-p', attached: true }] },
  {
    name: 'openssl',
    commands: ['openssl'],
    options: [
      { flag: '-k', separate: true },
      { flag: '-pass', separate: true, valuePrefix: 'pass:' },
      { flag: '-passin', separate: true, valuePrefix: 'pass:' },
      { flag: '-passout', separate: true, valuePrefix: 'pass:' },
    ],
  },
  {
    name: 'java keystores',
    commands: ['keytool', 'jarsigner'],
    options: ['-storepass', '-keypass', '-srcstorepass', '-deststorepass', '-srckeypass', '-destkeypass', '-new'].map((flag) => ({ flag, separate: true })),
  },
  { name: 'lftp', commands: ['lftp'], options: userPass(',', '-u', '--user') },
  { name: 'samba', commands: ['smbclient', 'rpcclient', 'smbcacls', 'smbget'], options: userPass('%', '-U', '--user') },
];

// ---------------------------------------------------------------------------
// 1. Command families.

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

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

/** A shell variable reference, not a secret: `$PW`, `${PW}`, possibly quoted (JSON-escaped quotes too). */
const VARIABLE_REF_RE = /^(?:\\?["'])?\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)(?:\\?["'])?$/;

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

function commandFamilyRanges(text: string, out: Range[]): void {
  if (!mayNameACommand(text)) return;
  for (const m of text.matchAll(SEGMENT_RE)) scanSegment(text, m.index, m.index + m[0].length, out);
}

// ---------------------------------------------------------------------------
// 2. Long options named for a credential.

/** The last word of a credential option's name (`--db-password`, `--client-secret`, `--oauth2-bearer`). */
const CREDENTIAL_OPTION_WORD = '(?:password|passwd|passphrase|pass|pwd|pw|token|secret|api[-_]?key|apikey|access[-_]?key|secret[-_]?key|bearer)';

/**
 * `--name VALUE` / `--name=VALUE` where the name's last word is a credential
 * word (earlier words joined by `-`/`_`, never `--no-…`), or the single-dash
 * `-password` / `-passwd` / `-passphrase`. A separate value that starts with
 * `-` is the next option, not a value. Quoted values run to their closing
 * quote on the same line.
 */
const CREDENTIAL_OPTION_RE = new RegExp(
  // the literal `-` first, then its lookbehind: a scan that tests a lookbehind at every position is several times slower
  String.raw`-(?:(?<![\w-]-)|(?<=\\[nrt]-))(?:-(?!no-)(?:[A-Za-z0-9]+[-_])*${CREDENTIAL_OPTION_WORD}|(?:[A-Za-z0-9]+[-_])*(?:password|passwd|passphrase))` +
    String.raw`(?:=|[ \t]+(?=[^\s-]))(${COMMAND_VALUE})`,
  'gi',
);

/**
 * Values of `--secret` that name where a secret is rather than holding it:
 * the build-secret specs of docker / buildah / podman (`id=npm,src=~/.npmrc`).
 */
const SECRET_SPEC_RE = /^--secret[ \t=]+(?:\\?["'])?(?:id|src|source|type|env|target)=/i;

/** The range inside a matched value's quotes (the whole value when it has none); none for references and markers. */
function innerValue(text: string, value: string, valueStart: number): Range | undefined {
  if (VARIABLE_REF_RE.test(value) || value.startsWith(MARKER_PREFIX)) return undefined;
  const quote = openingQuote(value);
  const start = valueStart + quote.length;
  const closed = quote !== '' && value.length > quote.length && value.endsWith(quote);
  const end = valueStart + value.length - (closed ? quote.length : 0);
  if (end <= start || text.startsWith(MARKER_PREFIX, start)) return undefined;
  return [start, end];
}

function credentialOptionRanges(text: string, out: Range[]): void {
  for (const m of text.matchAll(CREDENTIAL_OPTION_RE)) {
    if (SECRET_SPEC_RE.test(m[0])) continue;
    const value = m[1]!;
    const range = innerValue(text, value, m.index + m[0].length - value.length);
    if (range !== undefined) out.push(range);
  }
}

// ---------------------------------------------------------------------------
// 3. Environment-style credential names.

/**
 * An environment-style NAME (upper case, `_`-separated) whose last part says
 * credential: `_PW`, `_PWD` (never the bare `PWD`/`OLDPWD` of the working
 * directory), `_PASS`, `_PASSWD`, `_KEY`, `_CRED(S)`, `_PAT`, `_PIN`. The
 * general assignment rule of the pipeline already covers names containing
 * PASSWORD, SECRET, TOKEN, API_KEY and the like.
 */
export const ENV_CREDENTIAL_NAME_RE = /^[A-Z][A-Z0-9_]*_(?:PW|PWD|PASS|PASSWD|KEY|CRED|CREDS|PAT|PIN)$/;

/**
 * The credential suffix and what follows it, found from the literal `_` (a
 * scan that tests a lookbehind at every position costs several times more);
 * the NAME before it is checked by walking back (`envNameStart`).
 */
const ENV_SUFFIX_RE = new RegExp(`_(?:PW|PWD|PASS|PASSWD|KEY|CRED|CREDS|PAT|PIN)${ASSIGNMENT_SEPARATOR}(${COMMAND_VALUE})`, 'g');

const isUpperOrDigit = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 48 && c <= 57);
const isNameChar = (c: number): boolean => isUpperOrDigit(c) || c === 95;
const isWordChar = (c: number): boolean => isNameChar(c) || (c >= 97 && c <= 122) || c === 36;

/**
 * Where the upper-case NAME ending at `underscore` starts, if it is one: an
 * upper-case letter first, then letters, digits and `_`, not glued to a word
 * before it (a JSON escape `\n` / `\r` / `\t` before it counts as a break).
 * Each character is walked at most once per scan: the separator after a name
 * is never a name character, so walks never overlap.
 */
function envNameStart(text: string, underscore: number): number | undefined {
  let i = underscore;
  while (i > 0 && isNameChar(text.charCodeAt(i - 1))) i--;
  while (i < underscore && !(text.charCodeAt(i) >= 65 && text.charCodeAt(i) <= 90)) i++;
  if (i === underscore) return undefined;
  // the run may start with digits or `_` glued to lower-case text: the name must not be glued to a word
  const before = i > 0 ? text.charCodeAt(i - 1) : -1;
  const escaped = i > 1 && text[i - 2] === '\\' && 'nrt'.includes(text[i - 1]!);
  if (before !== -1 && isWordChar(before) && !escaped) return undefined;
  return i;
}

function envAssignmentRanges(text: string, out: Range[]): void {
  for (const m of text.matchAll(ENV_SUFFIX_RE)) {
    if (envNameStart(text, m.index) === undefined) continue;
    const value = m[1]!;
    const range = innerValue(text, value, m.index + m[0].length - value.length);
    if (range !== undefined) out.push(range);
  }
}

// ---------------------------------------------------------------------------

/** Every command-line credential in `text`, as ranges (unsorted, possibly overlapping). */
export function commandCredentialRanges(text: string): Range[] {
  const out: Range[] = [];
  commandFamilyRanges(text, out);
  credentialOptionRanges(text, out);
  envAssignmentRanges(text, out);
  return out;
}
