import { execFileSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';

/** A real, small tmpfs: needs root (CAP_SYS_ADMIN). Returns why not, when it cannot. */
export function mountTmpfs(dir: string, size: string): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: cannot mount a tmpfs';
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
    return undefined;
  } catch (err) {
    return `mount -t tmpfs failed: ${(err as { stderr?: Buffer }).stderr?.toString().trim() ?? (err as Error).message}`;
  }
}

export function umount(dir: string): void {
  try {
    execFileSync('umount', [dir], { stdio: 'pipe' });
  } catch {
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  }
}

/** Write a file until the filesystem refuses more: afterwards not one free page is left. */
export function fill(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}
