import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * A PATH whose only `node` is the one running the tests (its directory first, every other directory holding a
 * `node` left out): install then pins process.execPath on any machine, whichever nodes the machine has, since the
 * runtime install pins depends on PATH (src/install/runtime-pin.ts).
 */
export function pathWithOnlyThisNode(pathVar: string = process.env.PATH ?? ''): string {
  const others = pathVar.split(path.delimiter).filter((d) => d && !existsSync(path.join(d, 'node')));
  return [path.dirname(process.execPath), ...others].join(path.delimiter);
}
