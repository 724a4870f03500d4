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
import { commandFamilyRanges } from './command-family-scan.js';
import { ASSIGNMENT_SEPARATOR, COMMAND_VALUE, MARKER_PREFIX, openingQuote, VARIABLE_REF_RE, type Range } from './patterns.js';

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
