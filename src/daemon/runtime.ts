/** The oldest Node.js release the daemon supports (package.json `engines`; a test keeps the two equal). */
export const NODE_FLOOR = '22.15.0';

const parts = (v: string) =>
  v
    .replace(/^v/, '')
    .split('.')
    .map((x) => Number.parseInt(x, 10) || 0);

/** One line for a daemon started on a Node.js older than the floor (it may work; it is not tested or supported), else undefined. */
export function runtimeWarning(version: string, floor = NODE_FLOOR): string | undefined {
  const [a = 0, b = 0, c = 0] = parts(version);
  const [x = 0, y = 0, z = 0] = parts(floor);
  const older = a !== x ? a < x : b !== y ? b < y : c < z;
  return older ? `Node.js ${version} is older than ${floor}, the oldest this daemon supports: use Node.js 24 LTS` : undefined;
}
