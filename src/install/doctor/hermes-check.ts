import { doctor as readHookList } from '../doctor.js';
import { fail, ok, type Check } from './check.js';

/**
 * The installed Hermes's version and hook list against the mapping (5): the hook-list reader (../doctor.ts), its
 * details kept as lines under the finding. Drift (a hook the mapping does not know, a known one gone) and a Hermes
 * not found or unreadable are FAIL.
 */
export function checkHermes(given: string | undefined, env: NodeJS.ProcessEnv): Check {
  const r = readHookList(given, env);
  const [head = '', ...details] = r.lines;
  const where = head.replace(/^doctor: /, '');
  const what = 'hermes';
  const trimmed = details.map((d) => d.trim());
  if (r.status === 2)
    return {
      ...fail(
        what,
        where + (trimmed.length ? `: ${trimmed[trimmed.length - 1]}` : ''),
        'give its place: hermes-aep doctor --hermes <its executable, venv or checkout>',
      ),
      details: trimmed.slice(0, -1),
    };
  if (r.status === 1)
    return {
      ...fail(what, `drift: ${where}`, 'update hermes-aep (git pull && npm run build in the checkout); docs/hermes-drift.md says how to read the lists'),
      details: trimmed,
    };
  return ok(what, where, trimmed);
}
