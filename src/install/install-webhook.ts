import { lstat, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WEBHOOK_SECRET_FILE } from '../config/config.js';
import { ensureSecretFile, readSecretFile } from '../transport/secret-file.js';
import { addApprovals, removeApprovals } from './allowlist.js';
import { daemonNote, hookTimeouts, resolveGates } from './gates.js';
import { addWebhook, MARK, shimCommand, timeoutFor } from './hermes-config.js';
import { ensureHookToken } from './hook-token.js';
import { atomicWrite, print, readHermesFiles, realTarget, removeCreated, summarize } from './install-io.js';
import { choiceLines, type InstallOptions } from './install-options.js';
import { installedHooks, modelCallSummary } from './model-calls.js';
import { outboundBlock } from './outbound-entry.js';
import { pluginDir, pluginState, removePlugin } from './plugin-copy.js';
import { pythonNowIso } from './py-time.js';
import { placeShim, shimDir } from './shim-copy.js';
import { resolveTarget, TargetError } from './shim-target.js';
import { pinRuntime } from './runtime-pin.js';
import { packageVersion } from './version.js';
import { requireOutboundWebhooks, shimUrlOption, splitEvents, webhookUrl, WebhookRefused } from './webhook-target.js';

/**
 * `hermes-aep install --transport webhook`: Hermes's own outbound webhook (`hooks.outbound`, an entry named
 * hermes-aep) posts the observed hooks to the daemon's `POST /webhook`, signed with `{stateDir}/webhook-secret`
 * (written inline into config.yaml: docs/webhook.md says why). The gated hooks (`pre_tool_call` under --control,
 * `pre_llm_call` under --instruct) keep a shell hook, since a webhook's answer is ignored, and are left out of the
 * webhook's events. Same edit rules as the shell transport (marked lines, proven to uninstall byte for byte); the
 * secret is never printed, the dry run shows it masked.
 */
export async function runWebhookInstall(opts: InstallOptions): Promise<void> {
  // every refusal comes before anything is read or written
  const hermes = requireOutboundWebhooks(opts.hermes);
  if (opts.socket !== undefined)
    throw new WebhookRefused('--transport webhook needs the daemon on TCP (Hermes cannot post to a unix socket): give --url, not --socket');
  const { AEP_SOCKET: _socket, ...tcpEnv } = process.env;
  let target;
  try {
    target = resolveTarget({ ...opts, url: shimUrlOption(opts.url) }, tcpEnv);
  } catch (err) {
    if (err instanceof TargetError) throw new WebhookRefused(err.message);
    throw err;
  }
  const url = webhookUrl(target);
  const gates = resolveGates(opts);
  const timeouts = hookTimeouts(gates, opts.timeout);
  const { webhook: events, shell: shellEvents } = splitEvents(installedHooks(opts), gates);
  const { home, homeExisted, configFile, allowFile, configText, allowText } = await readHermesFiles(opts.hermesHome);

  const secretFile = path.join(target.stateDir, WEBHOOK_SECRET_FILE);
  const secretExists = await lstat(secretFile).then(
    () => true,
    (err: unknown) => {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    },
  );
  const fail = (m: string) => new Error(`${m} (install writes it into config.yaml)`);
  // a dry run (or a first install) plans with a stand-in when the file is missing: the entry is new either way
  const existing = secretExists ? await readSecretFile(secretFile, 'the webhook secret', fail) : undefined;
  const version = packageVersion();
  const source = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'shim', 'hook.cjs');
  const shimPath = path.join(shimDir(target.stateDir, version), 'hook.cjs');
  const runtime = await pinRuntime();
  const command = shimCommand(runtime.node, shimPath, [...target.args, ...gates.args]);
  const entry = { command, ...timeouts };
  const shell = shellEvents.length > 0 ? { entry, events: shellEvents } : undefined;
  const plan = (secret: string) => addWebhook(configText ?? '', shell, { url, events, secret }, { create: configText === undefined });
  let cfg = plan(existing?.secret ?? '0'.repeat(64));
  if (shell) addApprovals(allowText, command, pythonNowIso(), null, shellEvents);
  const pluginHere = (await pluginState(home)) === 'ours';

  const report = [
    `install --transport webhook${opts.dryRun ? ' (dry run: nothing is written)' : ''}: HERMES_HOME=${home}${homeExisted ? '' : ` (does not exist: ${opts.dryRun ? 'would be created' : 'created'}, 0700)`}`,
    ...choiceLines(opts),
    `  hermes: ${hermes.root} (found via ${hermes.via}): has outbound webhooks (agent/outbound_webhooks.py)`,
    `  webhook: ${url} (the daemon must run with AEP_PORT=${new URL(url).port || '80'}); ${events.length} events: ${events.join(', ')}`,
  ];
  if (!opts.dryRun && !homeExisted) await mkdir(home, { recursive: true, mode: 0o700 });
  // after every refusal: the secret the daemon will check, made now when missing, and the plan made again with it
  const made = opts.dryRun || existing ? undefined : await ensureSecretFile(secretFile, 'the webhook secret', fail);
  if (made) cfg = plan(made.secret);
  report.push(
    `  secret: ${secretFile} ${existing || (made && !made.created) ? '(exists, kept)' : `(${opts.dryRun ? 'would be created' : 'created'}: 64 hex characters, 0600)`}; written inline into config.yaml, never printed`,
  );
  if (existing?.exposed || made?.exposed) report.push(`    (${secretFile} is readable by other users: chmod 600 it)`);
  report.push(`  gates: ${gates.summary}`, ...daemonNote(gates));
  let allow = shell ? undefined : removeApprovals(allowText);
  if (shell) {
    const placed = await placeShim(source, target.stateDir, version, { dryRun: opts.dryRun });
    report.push(`  shell hooks kept for the gated events (a webhook cannot answer): ${shellEvents.join(', ')}`);
    report.push(`    ${runtime.line}`, ...(runtime.warning ? [`    ${runtime.warning}`] : []));
    report.push(
      placed.action === 'kept'
        ? `    shim: ${placed.path} (version ${version}, already in place)`
        : `    shim: ${placed.action === 'copied' ? 'copy' : 'replace (same version, different bytes)'} ${source} → ${placed.path} (read-only, directory 0700)`,
    );
    const token = await ensureHookToken(target.stateDir, { dryRun: opts.dryRun });
    report.push(
      `    token: ${token.path} ${token.action === 'kept' ? '(exists, kept)' : `(${opts.dryRun ? 'would be created' : 'created'}: 64 hex characters, 0600)`}`,
    );
    allow = addApprovals(allowText, command, pythonNowIso(), placed.mtimeIso, shellEvents);
  }
  report.push(modelCallSummary(opts, 'webhook'));

  if (configText === undefined) report.push(`  config.yaml: does not exist: created, 0600 (uninstall deletes it again when nothing else is in it)`);
  report.push(...summarize([...cfg.changes, ...allow!.changes]));
  if (shell && cfg.changed) report.push(`    command: ${command}`, `    timeout: ${shellEvents.map((ev) => `${ev} ${timeoutFor(entry, ev)}`).join(', ')}`);
  if (!cfg.changed && !allow!.changed) report.push('  config.yaml and the allowlist already hold exactly these entries: nothing to change');
  if (pluginHere) report.push(`  plugin: remove ${pluginDir(home)} (the webhook transport replaces it)`);
  const mode = configText === undefined ? undefined : (await stat(await realTarget(configFile))).mode & 0o777;
  if (mode !== undefined && (mode & 0o077) !== 0)
    report.push(
      `  note: config.yaml is readable by others (mode ${mode.toString(8).padStart(4, '0')}) and holds the secret: whoever can read it can sign deliveries; chmod 600 it (install keeps its mode)`,
    );
  report.push(
    '  note: Hermes reads hooks.outbound when a session starts: restart a running gateway; set no_proxy=127.0.0.1,localhost where Hermes runs if it has an http_proxy',
  );

  if (opts.dryRun) {
    if (cfg.changed) {
      report.push('', `--- the entry under hooks.outbound in ${configFile} (every other line stays as it is; the secret is not shown):`);
      report.push(...outboundBlock({ url, events, secret: '' }, 4, `"<the 64 hex characters of ${secretFile}>"`).map((l) => `${l}  ${MARK}`));
      if (shell) report.push(`--- each of ${shellEvents.join(', ')} under hooks: gets:`, `    - command: ${command}  ${MARK}`);
    }
    await print(report);
    return;
  }
  if (cfg.changed) await atomicWrite(await realTarget(configFile), cfg.text);
  if (allow!.deleteFile) await removeCreated(allowFile);
  else if (allow!.changed) await atomicWrite(await realTarget(allowFile), allow!.text);
  if (pluginHere) await removePlugin(home);
  await print(report);
}
