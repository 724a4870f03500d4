import { statfs } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ok, warn, type Check } from './check.js';

export const LOW_BYTES = 1024 ** 3;
export const LOW_FRACTION = 0.05;

const gib = (n: number) => `${(n / 1024 ** 3).toFixed(1)} GiB`;

/** Free space under the history (8): a warning under 1 GiB or under 5 % of the file system. */
export function diskFinding(dir: string, free: number, total: number): Check {
  const what = 'disk';
  const pct = total > 0 ? (100 * free) / total : 0;
  const finding = `${gib(free)} free of ${gib(total)} (${pct.toFixed(1)} %) under ${dir}`;
  if (free < LOW_BYTES || free < LOW_FRACTION * total)
    return warn(
      what,
      `${finding}: low (under 1 GiB or 5 %); when full, hooks are refused (503) and spooled`,
      `free space there, or set AEP_LOG_DIR to a larger file system`,
    );
  return ok(what, finding);
}

export function historyDir(env: NodeJS.ProcessEnv): string {
  return path.resolve(env.AEP_LOG_DIR || path.join(env.HOME || os.homedir(), '.aep', 'logs'));
}

export async function checkDisk(env: NodeJS.ProcessEnv): Promise<Check> {
  const dir = historyDir(env);
  // the directory may not exist yet: the file system it will be made on
  let at = dir;
  for (;;) {
    try {
      const s = await statfs(at);
      return diskFinding(dir, s.bavail * s.bsize, s.blocks * s.bsize);
    } catch (err) {
      const up = path.dirname(at);
      if (up === at) return warn('disk', `cannot read free space under ${dir} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, 'check AEP_LOG_DIR');
      at = up;
    }
  }
}
