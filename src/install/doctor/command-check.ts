import { statSync } from 'node:fs';
import os from 'node:os';
import { cacheOf, cacheRoots, nodeMajor, nodeVersion, SHIM_NODE_FLOOR_MAJOR } from '../runtime-pin.js';
import { fail, ok, warn, type Check } from './check.js';
import { endpointName, probeHealth, type Endpoint } from './daemon-probe.js';
import { parseCommand, sameEndpoint, targetOfArgs, transportOf, type Registration, type ShellCommand } from './registration.js';

const INSTALL = 'hermes-aep install';

/** Which transport install left in this HERMES_HOME (6). */
export function transportCheck(home: string, r: Registration): Check {
  const what = 'transport';
  const t = transportOf(r);
  if (t === 'none')
    return fail(what, `none installed in HERMES_HOME=${home}${r.configFound ? '' : ' (no config.yaml)'}: Hermes sends the daemon nothing`, INSTALL);
  if (t === 'plugin' && r.pluginFiles !== 'ours')
    return fail(
      what,
      `plugin enabled in config.yaml, but ${r.pluginFiles === 'absent' ? 'plugins/hermes-aep/ is missing' : 'plugins/hermes-aep/ is not ours'}`,
      `${INSTALL} --transport plugin`,
    );
  const gated = t === 'webhook' && r.shell.length > 0 ? ` (+ shell hooks for ${[...new Set(r.shell.map((s) => s.event))].join(', ')})` : '';
  const where = t === 'webhook' ? `: ${r.webhookUrls.join(', ')}` : t === 'shell' ? `: ${r.shell.length} hooks` : '';
  return ok(what, `${t}${where}${gated}`);
}

/** What running `<node> --version` and looking at the script found (the I/O), for the pure decision below. */
export interface CommandFacts {
  readonly nodeExists: boolean;
  readonly nodeVersion: string | undefined;
  readonly nodeCache: string | undefined;
  readonly scriptExists: boolean;
}

/** The registered command resolves and runs (3). */
export function commandFinding(c: ShellCommand, f: CommandFacts): Check {
  const what = 'registered command';
  const again = `${INSTALL} (again, with a node ${SHIM_NODE_FLOOR_MAJOR}+ outside cache directories first on PATH)`;
  if (!f.nodeExists) return fail(what, `its runtime ${c.node} does not exist: every hook fails open silently`, again);
  const major = nodeMajor(f.nodeVersion);
  if (major === undefined) return fail(what, `its runtime ${c.node} does not run (no answer to --version): every hook fails open silently`, again);
  if (major < SHIM_NODE_FLOOR_MAJOR) return fail(what, `its runtime ${c.node} is ${f.nodeVersion}, older than the shim's ${SHIM_NODE_FLOOR_MAJOR}`, again);
  if (!f.scriptExists) return fail(what, `the shim ${c.script} does not exist: every hook fails open silently`, INSTALL);
  if (f.nodeCache !== undefined)
    return warn(
      what,
      `${c.node} (${f.nodeVersion}) runs ${c.script}, but the runtime is under the cache directory ${f.nodeCache}: a cache clean breaks every hook`,
      again,
    );
  return ok(what, `${c.node} (${f.nodeVersion}) runs ${c.script}`);
}

async function factsOf(c: ShellCommand, env: NodeJS.ProcessEnv): Promise<CommandFacts> {
  const nodeExists = statSync(c.node, { throwIfNoEntry: false })?.isFile() ?? false;
  return {
    nodeExists,
    nodeVersion: nodeExists ? await nodeVersion(c.node) : undefined,
    nodeCache: cacheOf(c.node, cacheRoots(env, env.HOME || os.homedir())),
    scriptExists: statSync(c.script, { throwIfNoEntry: false })?.isFile() ?? false,
  };
}

/** The registered target against the daemon found (3): the same place, or the registered one answers too. */
export async function targetFinding(registered: Endpoint, answering: readonly Endpoint[]): Promise<Check> {
  const what = 'registered target';
  const name = endpointName(registered);
  if (answering.some((a) => sameEndpoint(a, registered))) return ok(what, `${name}, where the daemon answers`);
  const p = await probeHealth(registered);
  if (p.answered && p.status !== 401) return ok(what, `${name} answers /healthz`);
  const found = answering.length ? `the daemon answers at ${answering.map(endpointName).join(', ')}` : 'no daemon answers there';
  return fail(
    what,
    `hooks go to ${name}, but ${found}`,
    answering.length
      ? `${INSTALL} with the daemon's AEP_STATE_DIR / AEP_SOCKET / AEP_PORT set (or --socket / --url)`
      : 'start the daemon (hermes-aep daemon) with the settings install recorded',
  );
}

export async function checkRegistration(
  r: Registration,
  answering: readonly Endpoint[],
  env: NodeJS.ProcessEnv,
): Promise<{ checks: Check[]; commands: ShellCommand[] }> {
  const checks: Check[] = [];
  const commands: ShellCommand[] = [];
  for (const command of new Set(r.shell.map((s) => s.command))) {
    const c = parseCommand(command);
    if (!c) {
      checks.push(fail('registered command', `cannot be read as a command line: ${command}`, INSTALL));
      continue;
    }
    commands.push(c);
    checks.push(commandFinding(c, await factsOf(c, env)));
  }
  const targets: Endpoint[] = commands.map((c) => c.target);
  if (r.pluginEnabled && r.pluginArgs) targets.push(targetOfArgs(r.pluginArgs).target);
  for (const u of r.webhookUrls) targets.push({ url: u });
  const seen: Endpoint[] = [];
  for (const t of targets) {
    if (seen.some((s) => sameEndpoint(s, t))) continue;
    seen.push(t);
    checks.push(await targetFinding(t, answering));
  }
  return { checks, commands };
}
