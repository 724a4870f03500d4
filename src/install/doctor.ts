import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BASELINE_HOOKS, KNOWN_HOOKS } from '../hermes/known-hooks.js';
import { REGISTERED_HOOKS } from '../hermes/envelope.js';
import { locateHermes } from './hermes-install.js';
import { readSetLiteral, readVersion } from './valid-hooks.js';

/**
 * The installed Hermes's own hook list against this adapter's mapping: the `hermes` check of `hermes-aep doctor`
 * (doctor/hermes-check.ts turns it into one). Read statically (never imported): `hermes_cli/plugins.py` VALID_HOOKS
 * (and SHELL_UNSUPPORTED_HOOKS where present), the version in `hermes_cli/__init__.py`, and whether
 * `agent/outbound_webhooks.py` exists. Status: 0 nothing unknown and nothing gone; 1 drift (a hook the mapping does
 * not know, or a known one that disappeared); 2 no Hermes found, or its hook list unreadable.
 */
export interface DoctorReport {
  readonly status: 0 | 1 | 2;
  readonly lines: readonly string[];
}

function readOptional(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

const list = (names: readonly string[]): string => (names.length ? names.join(', ') : '(none)');

export function doctor(given: string | undefined, env: NodeJS.ProcessEnv = process.env): DoctorReport {
  const where = locateHermes(given, env);
  if (!where.ok) return { status: 2, lines: [`doctor: ${where.problem}`] };
  const pkg = path.join(where.root, 'hermes_cli');
  const lines = [`doctor: Hermes at ${pkg} (found via ${where.via})`];
  const init = readOptional(path.join(pkg, '__init__.py'));
  const version = init === undefined ? undefined : readVersion(init);
  lines.push(
    `  version: ${version ?? (init === undefined ? 'unknown (hermes_cli/__init__.py unreadable)' : 'unknown (no __version__ in hermes_cli/__init__.py)')}`,
  );
  const pluginsFile = path.join(pkg, 'plugins.py');
  const plugins = readOptional(pluginsFile);
  if (plugins === undefined) return { status: 2, lines: [...lines, `  hook list: ${pluginsFile} unreadable`] };
  const valid = readSetLiteral(plugins, 'VALID_HOOKS');
  if (!valid.ok) return { status: 2, lines: [...lines, `  hook list: unreadable in ${pluginsFile}: ${valid.problem}`] };
  const installed = new Set(valid.value.names);
  const unknown = [...installed].filter((h) => !KNOWN_HOOKS.includes(h)).sort();
  const gone = BASELINE_HOOKS.filter((h) => !installed.has(h)).sort();
  const registeredGone = REGISTERED_HOOKS.filter((h) => !installed.has(h));
  lines.push(`  hooks: ${installed.size} in VALID_HOOKS`);
  if (valid.value.other > 0) lines.push(`  note: VALID_HOOKS has ${valid.value.other} element(s) that are not plain strings; the list read may be incomplete`);
  lines.push(`  unknown to the mapping: ${list(unknown)}`);
  lines.push(`  known, but gone: ${list(gone)}${registeredGone.length ? ` (install registers ${registeredGone.join(', ')}: Hermes would refuse them)` : ''}`);
  const shell = readSetLiteral(plugins, 'SHELL_UNSUPPORTED_HOOKS');
  if (shell.ok) lines.push(`  refused to shell hooks: ${list(shell.value.names)}`);
  const webhooks = existsSync(path.join(where.root, 'agent', 'outbound_webhooks.py'));
  lines.push(`  outbound webhooks: ${webhooks ? 'yes (agent/outbound_webhooks.py)' : 'no'}`);
  const drift = unknown.length > 0 || gone.length > 0;
  lines.push(drift ? '  drift: yes (see docs/hermes-drift.md, "doctor")' : '  drift: none');
  return { status: drift ? 1 : 0, lines };
}
