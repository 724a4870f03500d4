/**
 * Whether `tail` colors its lines, and the styling itself (node:util
 * `styleText`, no dependency). The rule: `FORCE_COLOR` set and not empty
 * decides (`0`/`false` off, anything else on); otherwise `NO_COLOR` set and
 * not empty turns colors off; otherwise colors only on a terminal that is
 * not `TERM=dumb`.
 */
import { styleText } from 'node:util';

type Format = Parameters<typeof styleText>[0];

export type Role = 'time' | 'session' | 'run' | 'tool' | 'attention' | 'failure' | 'warning' | 'notice' | 'dim' | 'plain';

/** Apply a role's style to text (identity when colors are off). */
export type Styler = (role: Role, text: string) => string;

export function colorEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  const force = env['FORCE_COLOR'];
  if (force !== undefined && force !== '') return force !== '0' && force.toLowerCase() !== 'false';
  const no = env['NO_COLOR'];
  if (no !== undefined && no !== '') return false;
  return stream.isTTY === true && env['TERM'] !== 'dumb';
}

const STYLES: Record<Exclude<Role, 'plain'>, Format> = {
  time: 'gray',
  session: 'cyan',
  run: 'blue',
  tool: 'green',
  attention: ['yellow', 'bold'],
  failure: ['red', 'bold'],
  warning: 'yellow',
  notice: 'magenta',
  dim: 'dim',
};

export const plainStyler: Styler = (_role, text) => text;

export const colorStyler: Styler = (role, text) => (role === 'plain' || text === '' ? text : styleText(STYLES[role], text, { validateStream: false }));

export function stylerFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): Styler {
  return colorEnabled(stream, env) ? colorStyler : plainStyler;
}
