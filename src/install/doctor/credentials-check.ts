import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fail, ok, type Check } from './check.js';

/** The hook token (4): present and 0600 when TCP is in use. `mode` undefined: the file is missing. */
export function tokenFinding(file: string, mode: number | undefined, tcpInUse: boolean): Check {
  const what = 'token';
  if (mode === undefined)
    return tcpInUse
      ? fail(
          what,
          `${file} is missing, and TCP is in use: every hook over TCP is refused (401)`,
          'start the daemon once (hermes-aep daemon creates it), or hermes-aep install',
        )
      : ok(what, `${file} absent; not needed (unix socket only)`);
  if ((mode & 0o077) !== 0) return fail(what, `${file} is readable by others (mode ${(mode & 0o777).toString(8).padStart(4, '0')})`, `chmod 600 ${file}`);
  return ok(what, `${file} (0600)${tcpInUse ? '' : '; TCP not in use'}`);
}

export async function checkToken(stateDir: string, tcpInUse: boolean): Promise<Check> {
  const file = path.join(stateDir, 'hook-token');
  const st = await lstat(file).catch(() => undefined);
  return tokenFinding(file, st?.mode, tcpInUse);
}

/** The allowlist (4): every shell hook of ours approved for its event and exact command, else Hermes asks (or, unattended, skips it). */
export function allowlistFinding(file: string, text: string | undefined, shell: readonly { event: string; command: string }[]): Check {
  const what = 'allowlist';
  if (shell.length === 0) return ok(what, 'no shell hooks of ours: not needed');
  let approvals: { event?: unknown; command?: unknown }[] = [];
  if (text !== undefined) {
    try {
      const list = (JSON.parse(text.replace(/^\uFEFF/, '')) as { approvals?: unknown }).approvals;
      approvals = Array.isArray(list) ? (list as { event?: unknown; command?: unknown }[]) : [];
    } catch {
      return fail(
        what,
        `${file} is not valid JSON: Hermes approves none of our hooks`,
        'fix the file by hand (hermes-aep install refuses to edit it), then hermes-aep install',
      );
    }
  }
  const missing = shell.filter((s) => !approvals.some((a) => a?.event === s.event && a?.command === s.command));
  if (missing.length === 0) return ok(what, `${file} approves all ${shell.length} of our hooks`);
  return fail(
    what,
    `${text === undefined ? `${file} is missing: ` : ''}${missing.length} of ${shell.length} hooks not approved (${missing.map((m) => m.event).join(', ')}): Hermes asks on a terminal and skips them otherwise`,
    'hermes-aep install',
  );
}

export async function checkAllowlist(home: string, shell: readonly { event: string; command: string }[]): Promise<Check> {
  const file = path.join(home, 'shell-hooks-allowlist.json');
  const text = await readFile(file, 'utf8').catch(() => undefined);
  return allowlistFinding(file, text, shell);
}
