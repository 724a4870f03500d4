import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { removeApprovals } from './allowlist.js';
import { enablePlugin } from './hermes-config.js';
import { ensureHookToken } from './hook-token.js';
import { atomicWrite, print, readHermesFiles, realTarget, removeCreated, summarize } from './install-io.js';
import { choiceLines, type InstallOptions } from './install-options.js';
import { lostToGrandfathering } from './grandfathering.js';
import { placePlugin } from './plugin-copy.js';
import { resolveTarget } from './shim-target.js';
import { daemonNote, resolveGates } from './gates.js';
import { modelCallArgs, modelCallSummary } from './model-calls.js';
import { packageVersion } from './version.js';

/**
 * `hermes-aep install --transport plugin`: copy the forwarder plugin to `$HERMES_HOME/plugins/hermes-aep/` (with the
 * target install resolved, in `hermes-aep.json`), add `hermes-aep` to `plugins.enabled` (marked, reversible, proven
 * like the hooks edit), and take out our shell hooks and their approvals (each hook would otherwise arrive twice).
 */
export async function runPluginInstall(opts: InstallOptions): Promise<void> {
  const target = resolveTarget(opts);
  const gates = resolveGates(opts);
  const { home, homeExisted, configFile, allowFile, configText, allowText } = await readHermesFiles(opts.hermesHome);
  const version = packageVersion();

  // every refusal comes before anything is written
  const cfg = enablePlugin(configText ?? '', { create: configText === undefined });
  const allow = removeApprovals(allowText);
  const conf = { installed_by: 'hermes-aep', version, args: [...target.args, ...gates.args, ...modelCallArgs(opts)] } as const;
  const dry = await placePlugin(home, conf, { dryRun: true });
  const others = await lostToGrandfathering(home, configText);

  const report = [
    `install --transport plugin${opts.dryRun ? ' (dry run: nothing is written)' : ''}: HERMES_HOME=${home}${homeExisted ? '' : ` (does not exist: ${opts.dryRun ? 'would be created' : 'created'}, 0700)`}`,

    ...choiceLines(opts),
  ];
  if (!opts.dryRun && !homeExisted) await mkdir(home, { recursive: true, mode: 0o700 });
  const placed = opts.dryRun ? dry : await placePlugin(home, conf);
  report.push(
    placed.action === 'kept'
      ? `  plugin: ${placed.dir} (version ${version}, already in place)`
      : `  plugin: ${placed.action === 'copied' ? 'copy' : 'replace'} plugin/hermes-aep (version ${version}) → ${placed.dir} (files 0600, directory 0700)`,
  );
  report.push(`  target: ${target.summary}`);
  report.push(`  gates: ${gates.summary}`, ...daemonNote(gates));
  if (gates.control)
    report.push('    (Hermes 0.21 and later give a plugin callback plugins.hook_callback_timeout, 30 s by default: the hold then ends 2 s before it)');
  report.push(modelCallSummary(opts, 'plugin'));
  const token = await ensureHookToken(target.stateDir, { dryRun: opts.dryRun });
  report.push(
    `  token: ${token.path} ${token.action === 'kept' ? '(exists, kept)' : `(${opts.dryRun ? 'would be created' : 'created'}: 64 hex characters, 0600)`}`,
  );
  if (configText === undefined) report.push(`  config.yaml: does not exist: created (uninstall deletes it again when nothing else is in it)`);
  report.push(...summarize([...cfg.changes, ...allow.changes]));
  if (!cfg.changed && !allow.changed) report.push('  config.yaml already enables the plugin and holds no hermes-aep hooks: nothing to change');
  if (!opts.dryRun) {
    if (cfg.changed) await atomicWrite(await realTarget(configFile), cfg.text);
    if (allow.deleteFile) await removeCreated(allowFile);
    else if (allow.changed) await atomicWrite(await realTarget(allowFile), allow.text);
  }
  await print(report);
  if (others.length > 0)
    process.stderr.write(
      `hermes-aep: note: config.yaml has no plugins.enabled, so Hermes's config migration (hermes update, hermes config migrate; a config older than schema 21) would enable every plugin in ${path.join(home, 'plugins')}; once it lists hermes-aep, the migration will not enable ${others.join(', ')} (not loaded today either): to load one, run \`hermes plugins enable <name>\`\n`,
    );
}
