// The two extra configurations of the `hermes-turn` suite (issue 25 item 3):
//   peer     Grafana's in-process Hermes plugin agento11y-hermes (PyPI), installed as its README says: into the Python
//            environment that runs Hermes (scripts/provision-peer.sh: a cached venv with hermes-agent and the peer,
//            keyed by both versions, outside the working tree), enabled by `plugins.enabled: [agento11y]` in
//            config.yaml (its README: on 0.19 `hermes plugins enable` does not see pip-installed plugins). Its OTel
//            channel exports to a local OTLP/HTTP sink that answers 200 (so it does its export work, to loopback, as
//            the daemon's history does to disk); its generations channel is off (AGENTO11Y_AUTH_MODE=none: it needs
//            Grafana's ingest API, which nothing here serves).
//   default  whatever `hermes-aep install` without --transport picks for that Hermes (the figure tracks the CLI).
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { BenchContext } from '../bench-types.js';
import type { FakeLlm } from '../../e2e/support/fake-llm.js';
import { makeHermesHome } from '../../e2e/support/hermes.js';
import type { HermesVersion } from '../../e2e/support/hermes-versions.js';
import { CLI, ROOT } from '../../support/paths.js';
import type { DaemonProcess } from '../../support/processes.js';
import { NO_BACKGROUND_REVIEW, registersModelCallHook, type BenchHome, type Transport } from './hermes-turn.js';

const run = promisify(execFile);

export const PEER_VERSION = '0.21.0';
export const PEER_ABOUT = `agento11y-hermes ${PEER_VERSION} (PyPI) in the Hermes venv, plugins.enabled: [agento11y]; OTel channel to a local OTLP/HTTP sink answering 200, generations channel off (AGENTO11Y_AUTH_MODE=none)`;

/** A loopback OTLP/HTTP sink: counts the requests the peer's exporters send, answers each 200 with an empty body. */
export interface OtlpSink {
  readonly url: string;
  readonly requests: () => number;
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let n = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      n++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => n,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The peer's venv `hermes` for a release, or why there is none (the provisioning's last lines). */
export async function peerBin(ctx: BenchContext, version: HermesVersion): Promise<{ ok: true; bin: string } | { ok: false; why: string }> {
  const env = { HERMES_VERSION: version, PEER_VERSION };
  try {
    const bin = ctx.provision
      ? (await ctx.provision('provision-peer.sh', env)).get('PEER_HERMES')
      : /^PEER_HERMES=(.+)$/m.exec(
          (await run('bash', [path.join(ROOT, 'scripts', 'provision-peer.sh')], { env: { ...process.env, ...env }, maxBuffer: 16 << 20 })).stdout,
        )?.[1];
    return bin ? { ok: true, bin } : { ok: false, why: 'provision-peer.sh printed no PEER_HERMES= line' };
  } catch (err) {
    const e = err as { stderr?: string; message?: string };
    return { ok: false, why: `provision-peer.sh failed: ${(e.stderr ?? e.message ?? String(err)).trim().split('\n').slice(-3).join(' / ')}` };
  }
}

/** A home that runs the peer's venv Hermes with the peer enabled and exporting to `sink`. */
export async function peerHome(llm: FakeLlm, version: HermesVersion, bin: string, sink: OtlpSink): Promise<BenchHome> {
  const h = await makeHermesHome({
    modelUrl: llm.url,
    hookEnv: {},
    version,
    install: false,
    extraYaml: ['plugins:\n  enabled:\n    - agento11y', NO_BACKGROUND_REVIEW].join('\n'),
  });
  const env = {
    ...h.env,
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    AGENTO11Y_AUTH_MODE: 'none',
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
  return { home: { ...h, bin, env }, transport: 'peer', modelCallHook: false };
}

/** A home installed by `install` without --transport (given this release's Hermes), and the line saying what it chose. */
export async function defaultHome(
  llm: FakeLlm,
  daemon: DaemonProcess,
  version: HermesVersion,
  hermesBin: string,
): Promise<{ home: BenchHome; chose: Transport; line: string }> {
  const hookEnv = { AEP_STATE_DIR: daemon.stateDir };
  const h = await makeHermesHome({ modelUrl: llm.url, hookEnv, version, install: false });
  const { stdout } = await run(process.execPath, [CLI, 'install', '--hermes', hermesBin], { env: { ...process.env, ...hookEnv, HERMES_HOME: h.home } });
  const m = /^ {2}transport: (shell|plugin|webhook) \((.*)\)$/m.exec(stdout);
  if (!m) throw new Error(`hermes-turn: install without --transport printed no transport line:\n${stdout}`);
  // the bench's daemon listens on its Unix socket only, so install cannot pick webhook here (it needs TCP)
  if (m[1] === 'webhook') throw new Error(`hermes-turn: install chose webhook for ${version}, which this bench does not run: ${m[2]}`);
  const chose = m[1] as Transport;
  const line = `${m[1]} (${m[2]})`;
  return { home: { home: h, transport: chose, modelCallHook: registersModelCallHook(h.home, chose) }, chose, line };
}
