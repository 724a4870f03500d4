import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { addApprovals, removeApprovals } from './allowlist.js';
import { addHooks, isOurCommand, MARK, ourCommands, removeHooks, shimCommand, timeoutFor } from './hermes-config.js';
import { daemonNote, hookTimeouts, resolveGates } from './gates.js';
import { ensureHookToken } from './hook-token.js';
import { installedHooks, modelCallSummary } from './model-calls.js';
import { pythonNowIso } from './py-time.js';
import { shlexSplit } from './shell-words.js';
import { placeShim, shimDir } from './shim-copy.js';
import { resolveTarget } from './shim-target.js';
import { pinRuntime } from './runtime-pin.js';
import { packageVersion } from './version.js';
import { pluginDir, pluginState, removePlugin } from './plugin-copy.js';
import { runPluginInstall } from './install-plugin.js';
import { runWebhookInstall } from './install-webhook.js';
import { chooseTransport } from './transport-choice.js';
import { choiceLines, type InstallOptions, type UninstallOptions } from './install-options.js';
import { atomicWrite, checkHome, hermesHome, print, readHermesFiles, readText, realTarget, removeCreated, summarize } from './install-io.js';

export type { InstallOptions, UninstallOptions } from './install-options.js';

/** `hermes-aep install` */
export async function runInstall(opts: InstallOptions): Promise<void> {
  if (opts.transport === undefined) {
    // no --transport: the cheapest one this Hermes and this target allow, said in one line of the install's report
    const choice = chooseTransport(opts);
    return runInstall({ ...opts, transport: choice.transport, choiceLine: choice.line });
  }
  if (opts.transport === 'plugin') return runPluginInstall(opts);
  if (opts.transport === 'webhook') return runWebhookInstall(opts);
  const target = resolveTarget(opts);
  const gates = resolveGates(opts);
  // a combination where Hermes would kill the shim before the daemon answers is refused here, before anything is read or written
  const timeouts = hookTimeouts(gates, opts.timeout);
  const events = installedHooks(opts);
  const { home, homeExisted, configFile, allowFile, configText, allowText } = await readHermesFiles(opts.hermesHome);

  const version = packageVersion();
  const source = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'shim', 'hook.cjs');
  const shimPath = path.join(shimDir(target.stateDir, version), 'hook.cjs');
  const runtime = await pinRuntime();
  const command = shimCommand(runtime.node, shimPath, [...target.args, ...gates.args]);
  const entry = { command, ...timeouts };
  const differing = Object.keys(timeouts.timeouts).map((ev) => `${ev}: ${timeoutFor(entry, ev)}`);
  const timeoutLine = `${entry.timeout}${differing.length ? ` (${differing.join(', ')})` : ''}`;

  // every refusal comes before anything is written
  const cfg = addHooks(configText ?? '', entry, events, { create: configText === undefined });
  addApprovals(allowText, command, pythonNowIso(), null, events);
  const pluginHere = (await pluginState(home)) === 'ours';

  const report = [
    `install${opts.dryRun ? ' (dry run: nothing is written)' : ''}: HERMES_HOME=${home}${homeExisted ? '' : ` (does not exist: ${opts.dryRun ? 'would be created' : 'created'}, 0700)`}`,
    ...choiceLines(opts),
  ];
  if (!opts.dryRun && !homeExisted) await mkdir(home, { recursive: true, mode: 0o700 });
  const placed = await placeShim(source, target.stateDir, version, { dryRun: opts.dryRun });
  report.push(
    placed.action === 'kept'
      ? `  shim: ${placed.path} (version ${version}, already in place)`
      : `  shim: ${placed.action === 'copied' ? 'copy' : 'replace (same version, different bytes)'} ${source} → ${placed.path} (read-only, directory 0700)`,
  );
  report.push(`  ${runtime.line}`, ...(runtime.warning ? [`  ${runtime.warning}`] : []));
  report.push(`  target: ${target.summary}`);
  report.push(`  gates: ${gates.summary}`, ...daemonNote(gates));
  report.push(modelCallSummary(opts, 'shell'));
  const token = await ensureHookToken(target.stateDir, { dryRun: opts.dryRun });
  report.push(
    `  token: ${token.path} ${token.action === 'kept' ? '(exists, kept)' : `(${opts.dryRun ? 'would be created' : 'created'}: 64 hex characters, 0600)`}`,
  );

  const allow = addApprovals(allowText, command, pythonNowIso(), placed.mtimeIso, events);
  if (configText === undefined) report.push(`  config.yaml: does not exist: created (uninstall deletes it again when nothing else is in it)`);
  report.push(...summarize([...cfg.changes, ...allow.changes]));
  if (cfg.changed) report.push(`    command: ${command}`, `    timeout: ${timeoutLine}`);
  if (!cfg.changed && !allow.changed) report.push('  config.yaml and the allowlist already hold exactly these entries: nothing to change');
  if (pluginHere) report.push(`  plugin: remove ${pluginDir(home)} (the shell transport replaces it)`);

  if (opts.dryRun) {
    // only what this tool writes: the rest of config.yaml can hold API keys
    if (cfg.changed) {
      report.push('', `--- each of the ${events.length} events under hooks: in ${configFile} gets (every other line stays as it is):`);
      report.push(`    - command: ${command}  ${MARK}`, `      timeout: ${entry.timeout}  ${MARK}`);
      for (const d of differing) report.push(`    (${d.replace(': ', ' gets timeout: ')})`);
    }
    await print(report);
    return;
  }
  if (cfg.changed) await atomicWrite(await realTarget(configFile), cfg.text);
  if (allow.changed) await atomicWrite(await realTarget(allowFile), allow.text);
  // after config.yaml no longer enables it, the plugin transport's files go
  if (pluginHere) await removePlugin(home);
  await print(report);
}

/** The copied shims our removed entries pointed at: uninstall leaves them (see README) and says where. */
function shimDirsOf(commands: readonly string[]): string[] {
  const dirs = new Set<string>();
  for (const c of commands) {
    const script = shlexSplit(c)?.[1];
    if (script && /\/shim\/[^/]+\/hook\.cjs$/.test(script)) dirs.add(path.dirname(script));
  }
  return [...dirs];
}

/** `hermes-aep uninstall` */
export async function runUninstall(opts: UninstallOptions): Promise<void> {
  const home = hermesHome(opts.hermesHome);
  if (!(await checkHome(home))) {
    await print([`uninstall: HERMES_HOME=${home} does not exist: nothing to change`]);
    return;
  }
  const configFile = path.join(home, 'config.yaml');
  const allowFile = path.join(home, 'shell-hooks-allowlist.json');
  const configText = await readText(await realTarget(configFile), 'config.yaml');
  const allowText = await readText(await realTarget(allowFile), 'shell-hooks-allowlist.json');
  const cfg = configText === undefined ? undefined : removeHooks(configText);
  const allow = removeApprovals(allowText);
  const commands = [...(configText === undefined ? [] : ourCommands(configText)), ...ourApprovalCommands(allowText)];

  const plugin = await pluginState(home);
  const report = [`uninstall${opts.dryRun ? ' (dry run: nothing is written)' : ''}: HERMES_HOME=${home}`];
  report.push(...summarize([...(cfg?.changes ?? []), ...allow.changes]));
  if (cfg?.deleteFile) report.push('  config.yaml: install created it and nothing else is in it: delete');
  if (plugin === 'ours') report.push(`  plugin: remove ${pluginDir(home)}`);
  if (!cfg?.changed && !allow.changed && plugin !== 'ours') report.push('  no hermes-aep entries: nothing to change');
  for (const dir of shimDirsOf(commands)) {
    report.push(`  left in place: ${dir} (a Hermes started before may still run it, another HERMES_HOME may use it; delete it when neither does)`);
  }
  if (!opts.dryRun) {
    if (cfg?.deleteFile) await removeCreated(configFile);
    else if (cfg?.changed) await atomicWrite(await realTarget(configFile), cfg.text);
    if (allow.deleteFile) await removeCreated(allowFile);
    else if (allow.changed) await atomicWrite(await realTarget(allowFile), allow.text);
    if (plugin === 'ours' && (await removePlugin(home)) === 'kept-dir') report.push(`    (other files are in ${pluginDir(home)}: the directory stays)`);
  }
  await print(report);
}

function ourApprovalCommands(text: string | undefined): string[] {
  if (!text || text.trim() === '') return [];
  try {
    const approvals = (JSON.parse(text.replace(/^\uFEFF/, '')) as { approvals?: unknown }).approvals;
    return Array.isArray(approvals) ? approvals.map((a) => (a as { command?: unknown })?.command).filter((c): c is string => isOurCommand(c)) : [];
  } catch {
    return [];
  }
}
