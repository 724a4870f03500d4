import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, stat, unlink, utimes } from 'node:fs/promises';
import path from 'node:path';
import { pythonMtimeIso } from './py-time.js';

/**
 * The shim Hermes runs lives at `{stateDir}/shim/{version}/hook.cjs`, a copy
 * of the build's `dist/src/shim/hook.cjs`: `npm run build` (and so `npm
 * start`, `npm test`) deletes `dist/`, and a registered file that vanishes or
 * changes under Hermes fails every hook and shows up in `hermes hooks doctor`
 * as modified since approval. The copy is read-only in a 0700 directory, its
 * mtime a whole second (so the allowlist's `script_mtime_at_approval` is
 * exact); the same version with the same bytes is left alone, a new version
 * gets a new directory, and old versions are never touched by install (a
 * Hermes started earlier may still run them).
 */

export interface PlacedShim {
  readonly path: string;
  /** kept: already there, same bytes; copied: new; replaced: same version, different bytes (a development build) */
  readonly action: 'kept' | 'copied' | 'replaced';
  /** the mtime Hermes records at approval; null on a dry run that would copy */
  readonly mtimeIso: string | null;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export function shimDir(stateDir: string, version: string): string {
  if (!/^[0-9A-Za-z][0-9A-Za-z.+-]*$/.test(version)) throw new Error(`package version ${JSON.stringify(version)} cannot name a directory`);
  return path.join(stateDir, 'shim', version);
}

async function readIf(file: string): Promise<Buffer | undefined> {
  try {
    return await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export async function placeShim(source: string, stateDir: string, version: string, opts: { dryRun?: boolean } = {}): Promise<PlacedShim> {
  const dir = shimDir(stateDir, version);
  const dest = path.join(dir, 'hook.cjs');
  let bytes: Buffer;
  try {
    bytes = await readFile(source);
  } catch {
    throw new Error(`the built shim ${source} is missing: run \`npm run build\` first`);
  }
  const current = await readIf(dest);
  if (current && sha256(current) === sha256(bytes)) {
    return { path: dest, action: 'kept', mtimeIso: pythonMtimeIso(await stat(dest, { bigint: true })) };
  }
  const action = current ? 'replaced' : 'copied';
  if (opts.dryRun) return { path: dest, action, mtimeIso: null };

  for (const d of [stateDir, path.join(stateDir, 'shim'), dir]) await mkdir(d, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.hook.cjs.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', 0o400);
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await chmod(tmp, 0o400);
    const whole = Math.floor(Date.now() / 1000);
    await utimes(tmp, whole, whole);
    const written = await readFile(tmp);
    if (sha256(written) !== sha256(bytes)) throw new Error(`the copy of the shim at ${tmp} does not match ${source}`);
    await rename(tmp, dest);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  const dh = await open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
  return { path: dest, action, mtimeIso: pythonMtimeIso(await stat(dest, { bigint: true })) };
}
