// Benchmark: the shim's wall time per hook against a bare Node start, its
// fail-open bounds, and the daemon's per-hook cost. Prints figures with their
// baselines as ratios; asserts nothing (correctness lives in the tests).
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { runShim, startDaemonProcess, tempDir } from '../support/processes.js';
import { scriptedSession } from '../support/scripted-session.js';

const N = Number(process.env.BENCH_N ?? 30);

function stats(xs: number[]): { median: number; p90: number; min: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { median: at(0.5), p90: at(0.9), min: s[0]! };
}

function bareNode(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    c.on('error', reject);
    c.on('close', () => resolve(performance.now() - t0));
  });
}

const fmt = (x: number) => `${x.toFixed(1)} ms`;

async function main(): Promise<void> {
  const daemon = await startDaemonProcess();
  const envs = scriptedSession().envelopes.map((e) => JSON.stringify(e));
  const bare: number[] = [];
  const shim: number[] = [];
  const refused: number[] = [];
  const full: number[] = [];
  const spoolState = tempDir('hermes-aep-bench-state-');
  const viaCli: number[] = [];
  for (let i = 0; i < N; i++) {
    // interleaved so machine noise hits every series alike
    bare.push(await bareNode());
    shim.push((await runShim(envs[i % envs.length]!, daemon.shimEnv)).ms);
    // daemon down: the shim spools the hook (into a temp state dir), or drops and counts it when the spool is full
    refused.push((await runShim(envs[0]!, { AEP_HOOK_URL: 'http://127.0.0.1:9/hook', AEP_STATE_DIR: spoolState })).ms);
    full.push((await runShim(envs[0]!, { AEP_HOOK_URL: 'http://127.0.0.1:9/hook', AEP_STATE_DIR: spoolState, AEP_SPOOL_MAX_FILES: '0' })).ms);
    viaCli.push((await runShim(envs[i % envs.length]!, daemon.shimEnv, 'cli')).ms);
  }
  // a daemon that accepts and never answers: the shim's timeout is the bound
  const hang = createServer(() => undefined);
  await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
  const port = (hang.address() as { port: number }).port;
  const hung = (await runShim(envs[0]!, { AEP_HOOK_URL: `http://127.0.0.1:${port}/hook`, AEP_SHIM_TIMEOUT_MS: '300' })).ms;
  hang.closeAllConnections();
  hang.close();

  // daemon-side cost: sequential keep-alive POSTs of the scripted envelopes
  const M = 2000;
  const t0 = performance.now();
  for (let i = 0; i < M; i++) {
    const r = await fetch(daemon.hookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...daemon.authHeaders },
      body: envs[i % envs.length],
    });
    await r.text();
  }
  const perHook = (performance.now() - t0) / M;
  const t1 = performance.now();
  for (let i = 0; i < M; i++) await (await fetch(`${daemon.url}/healthz`)).text();
  const perHealth = (performance.now() - t1) / M;
  await daemon.stop();

  const b = stats(bare);
  const s = stats(shim);
  const f = stats(refused);
  const c = stats(viaCli);
  console.log(
    `shim start benchmark (N=${N}, node ${process.version}, ${process.platform}/${process.arch}${process.env.NODE_EXTRA_CA_CERTS ? ', NODE_EXTRA_CA_CERTS set: every Node start loads it' : ''})`,
  );
  console.log(`  bare 'node -e ""'            median ${fmt(b.median)}  p90 ${fmt(b.p90)}  (baseline 1.00x)`);
  console.log(`  shim -> live daemon (the installed 'node hook.cjs'): median ${fmt(s.median)}  p90 ${fmt(s.p90)}  ratio ${(s.median / b.median).toFixed(2)}x`);
  console.log(`  'hermes-aep hook' (ESM bin) median ${fmt(c.median)}  p90 ${fmt(c.p90)}  ratio ${(c.median / b.median).toFixed(2)}x`);
  const d = stats(full);
  console.log(
    `  shim, daemon down (refused) -> spooled  median ${fmt(f.median)}  p90 ${fmt(f.p90)}  ratio ${(f.median / b.median).toFixed(2)}x  (fail-open cost over bare start: ${fmt(f.median - b.median)})`,
  );
  console.log(`  shim, daemon down, spool full -> dropped and counted  median ${fmt(d.median)}  p90 ${fmt(d.p90)}  ratio ${(d.median / b.median).toFixed(2)}x`);
  console.log(`  shim, daemon hung, 300 ms timeout: ${fmt(hung)} (bound = start + AEP_SHIM_TIMEOUT_MS)`);
  console.log(
    `daemon per-hook (sequential keep-alive POST /hook, M=${M}): ${(perHook * 1000).toFixed(0)} us; GET /healthz baseline ${(perHealth * 1000).toFixed(0)} us; ratio ${(perHook / perHealth).toFixed(2)}x`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
