import { hermesHome } from '../install-io.js';
import { exitStatus, formatCheck, type Check } from './check.js';
import { checkRegistration, transportCheck } from './command-check.js';
import { checkAllowlist, checkToken } from './credentials-check.js';
import { checkDaemon, daemonPlaces } from './daemon-check.js';
import { checkDisk } from './disk-check.js';
import { checkHermes } from './hermes-check.js';
import { checkOtlp } from './otlp-check.js';
import { readRegistration } from './registration.js';
import { checkRuntime } from './runtime-check.js';

export interface DoctorOptions {
  readonly hermes?: string | undefined;
  readonly hermesHome?: string | undefined;
}

/**
 * `hermes-aep doctor`: every check a new user needs when something is wrong, in order (runtime, daemon, transport,
 * registered command and target, token, allowlist, Hermes and its hooks, OTLP endpoint, disk). Exit status: 0 all ok
 * or warnings only; 1 any FAIL; 2 doctor itself could not run (the CLI's, on an exception).
 */
export async function runDoctor(opts: DoctorOptions, env: NodeJS.ProcessEnv = process.env): Promise<{ status: 0 | 1; checks: Check[] }> {
  const checks: Check[] = [checkRuntime()];
  const places = daemonPlaces(env);
  const daemon = await checkDaemon(places);
  checks.push(...daemon.checks);
  const home = hermesHome(opts.hermesHome);
  const reg = await readRegistration(home);
  checks.push(transportCheck(home, reg));
  const registered = await checkRegistration(reg, daemon.answering, env);
  checks.push(...registered.checks);
  const tcpInUse = places.url !== undefined || reg.webhookUrls.length > 0 || registered.commands.some((c) => 'url' in c.target);
  const stateDirs = new Set([places.stateDir, ...registered.commands.filter((c) => 'url' in c.target).map((c) => c.stateDir)]);
  for (const dir of stateDirs) checks.push(await checkToken(dir, tcpInUse));
  checks.push(await checkAllowlist(home, reg.shell));
  checks.push(checkHermes(opts.hermes, env));
  checks.push(await checkOtlp(env));
  checks.push(await checkDisk(env));
  return { status: exitStatus(checks), checks };
}

export async function runDoctorCli(opts: DoctorOptions & { json?: boolean | undefined }): Promise<void> {
  const r = await runDoctor(opts);
  const out = opts.json ? `${JSON.stringify({ status: r.status, checks: r.checks })}\n` : `${r.checks.flatMap(formatCheck).join('\n')}\n`;
  await new Promise<void>((resolve) => process.stdout.write(out, () => resolve()));
  process.exitCode = r.status;
}
