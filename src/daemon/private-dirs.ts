import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { DaemonConfig } from '../config/config.js';
import { ConfigError, type ConfigProblem } from '../config/read-env.js';
import { INGEST_DIR } from '../history/index.js';
import { ensurePrivateDir, NotPrivateError } from '../util/private-path.js';

/**
 * The directories the daemon writes in, made 0700 or checked before anything
 * is written there: the state dir and its spool, the log dir, its `hermes/`
 * and the foreign agents' dirs below `ingest/`, the recording dir when set.
 * One another user owns or may write in is refused: the start stops with one
 * line naming the variable, the directory and the fix (chmod 700, or a
 * directory of the daemon's own user). A loose mode is not fixed silently:
 * what another user could write there may already be there.
 */
export async function ensurePrivateDirs(config: DaemonConfig): Promise<void> {
  const ingest = path.join(config.historyDir, INGEST_DIR);
  const dirs: [variable: string, dir: string, follow: boolean][] = [
    ['AEP_STATE_DIR', config.stateDir, true],
    ['AEP_STATE_DIR', path.join(config.stateDir, 'spool'), false],
    ['AEP_LOG_DIR', config.historyDir, true],
    ['AEP_LOG_DIR', path.join(config.historyDir, 'hermes'), false],
    ...(config.recordDir !== undefined ? [['AEP_RECORD_DIR', config.recordDir, true] as [string, string, boolean]] : []),
  ];
  const problems: ConfigProblem[] = [];
  const refused: string[] = [];
  const check = async (variable: string, dir: string, follow: boolean) => {
    // nothing is made inside a directory already refused
    if (refused.some((r) => dir.startsWith(r + path.sep))) return;
    try {
      await ensurePrivateDir(dir, { follow });
    } catch (err) {
      if (!(err instanceof NotPrivateError)) throw err;
      problems.push({ variable, rule: err.message });
      refused.push(dir);
    }
  };
  for (const [variable, dir, follow] of dirs) await check(variable, dir, follow);
  // foreign agents' dirs that exist already (the ingest makes new ones 0700 and checks each at open)
  const agents = refused.some((r) => ingest.startsWith(r + path.sep)) ? [] : await readdir(ingest, { withFileTypes: true }).catch(() => []);
  if (agents.length > 0) await check('AEP_LOG_DIR', ingest, false);
  for (const a of agents) if (a.isDirectory() || a.isSymbolicLink()) await check('AEP_LOG_DIR', path.join(ingest, a.name), false);
  if (problems.length > 0) throw new ConfigError(problems);
}
