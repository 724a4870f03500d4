/**
 * The live view's files: the repository's `ui/` folder (shipped with the
 * package), read once on the first request and held in memory with their
 * gzip'd bytes (the folder is small). Only plain names with a known type are
 * served: the listing is the allowlist, so no path, no dotfile, no traversal
 * can name anything else.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip as gzipCb } from 'node:zlib';
import { findPackageRoot } from '../util/package-root.js';

const gzip = promisify(gzipCb);

/** The page's folder: `ui/` at the package root (beside `plugin/` and `schemas/`). */
export const uiFolder = (): string => path.join(findPackageRoot() ?? '.', 'ui');

const TYPES = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
} as const;

/** A name the page may ask for: letters, digits, `-`, `_`, dots between them, one of the served extensions; never a dotfile or a path. */
export const SERVED_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*\.(html|js|css|svg|png)$/;

/** A file larger than this is not served (the page's assets are about 100 KB compressed in all). */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

export interface UiFile {
  readonly type: string;
  readonly raw: Buffer;
  readonly gzip: Buffer;
}

export type UiFiles = ReadonlyMap<string, UiFile>;

/** Every servable regular file of `dir` by name; an absent folder is an empty map. */
export async function loadUiFiles(dir: string): Promise<UiFiles> {
  const files = new Map<string, UiFile>();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return files;
  }
  for (const name of names.sort()) {
    const m = SERVED_NAME.exec(name);
    if (!m) continue;
    const p = path.join(dir, name);
    const st = await stat(p).catch(() => undefined);
    if (!st?.isFile() || st.size > MAX_FILE_BYTES) continue;
    const raw = await readFile(p);
    files.set(name, { type: TYPES[m[1] as keyof typeof TYPES], raw, gzip: await gzip(raw, { level: 9 }) });
  }
  return files;
}

/** Whether an Accept-Encoding header takes gzip (a `q=0` refuses it). */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  const h = Array.isArray(header) ? header.join(',') : (header ?? '');
  for (const part of h.split(',')) {
    const [coding = '', ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') continue;
    const q = params.find((p) => p.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) return true;
  }
  return false;
}
