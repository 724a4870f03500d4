// Benchmark: the daemon's POST /hook latency, sequential and concurrent, over
// keep-alive loopback HTTP. Set BENCH_BASELINE_CLI to another build's
// dist/src/cli.js to measure it in the same run (rounds interleaved, so machine
// noise hits both alike) and print the ratios. BENCH_VARIANTS adds env
// variants of this build, e.g. `fsync0:AEP_FSYNC_INTERVAL_MS=0`.
// Prints figures; asserts nothing.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { Agent } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { keyedSession, postHook } from '../support/hook-client.js';
import { CLI } from '../support/paths.js';
import { waitFor } from '../support/processes.js';

const SEQ = Number(process.env.BENCH_SEQ ?? 2000);
const CONC = Number(process.env.BENCH_CONC ?? 64);
const CONC_CALLS = Number(process.env.BENCH_CONC_CALLS ?? 30);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

interface Target {
  readonly name: string;
  readonly cli: string;
  readonly env: Record<string, string>;
}

interface Running {
  readonly url: string;
  readonly stateDir: string;
  stop(): Promise<void>;
}

async function start(t: Target): Promise<Running> {
  const base = mkdtempSync(path.join(os.tmpdir(), 'hermes-aep-bench-'));
  const stateDir = path.join(base, 'state');
  const child = spawn(process.execPath, [t.cli, 'daemon'], {
    env: {
      ...process.env,
      AEP_HOST: '127.0.0.1',
      AEP_PORT: '0',
      AEP_LOG_DIR: path.join(base, 'log'),
      AEP_STATE_DIR: stateDir,
      OTEL_TRACES_EXPORTER: 'none',
      ...t.env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = await waitFor('listening', () => /"url":"(http:\/\/[^"]+)"/.exec(err)?.[1], 20_000);
  return {
    url,
    stateDir,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const q = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};

/** Sequential keep-alive POSTs of one long session: per-hook latencies (ms). */
async function sequential(d: Running, round: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const hooks = keyedSession(`seq_${round}`, Math.ceil(SEQ / 2));
  const out: number[] = [];
  for (const h of hooks.slice(0, SEQ)) {
    const t0 = performance.now();
    const r = await postHook(`${d.url}/hook`, agent, h.body, d.stateDir);
    out.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`hook answered ${r.status}`);
  }
  agent.destroy();
  return out;
}

/** CONC sessions at once, each one hook at a time: per-hook latencies and hooks per second. */
async function concurrent(d: Running, round: number): Promise<{ lat: number[]; rate: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONC });
  const lat: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONC }, async (_, s) => {
      for (const h of keyedSession(`conc_${round}_${s}`, CONC_CALLS)) {
        const t = performance.now();
        const r = await postHook(`${d.url}/hook`, agent, h.body, d.stateDir);
        lat.push(performance.now() - t);
        if (r.status !== 200) throw new Error(`hook answered ${r.status}`);
      }
    }),
  );
  const rate = lat.length / ((performance.now() - t0) / 1000);
  agent.destroy();
  return { lat, rate };
}

async function main(): Promise<void> {
  const targets: Target[] = [{ name: 'this build', cli: CLI, env: {} }];
  for (const v of (process.env.BENCH_VARIANTS ?? '').split(',').filter(Boolean)) {
    const [name, ...kv] = v.split(':');
    targets.push({ name: `this build, ${name}`, cli: CLI, env: Object.fromEntries(kv.map((x) => x.split('=') as [string, string])) });
  }
  if (process.env.BENCH_BASELINE_CLI) targets.unshift({ name: 'baseline', cli: process.env.BENCH_BASELINE_CLI, env: {} });
  const seq = new Map<string, number[]>(targets.map((t) => [t.name, []]));
  const conc = new Map<string, number[]>(targets.map((t) => [t.name, []]));
  const rates = new Map<string, number[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) {
      const d = await start(t);
      try {
        // warm-up: the first hooks pay for JIT and file creation
        await sequential(d, -1 - round).catch(() => undefined);
        seq.get(t.name)!.push(...(await sequential(d, round)));
        const c = await concurrent(d, round);
        conc.get(t.name)!.push(...c.lat);
        rates.get(t.name)!.push(c.rate);
      } finally {
        await d.stop();
      }
    }
  }
  const base = targets[0]!.name;
  const us = (ms: number) => `${(ms * 1000).toFixed(0)} us`;
  console.log(
    `POST /hook latency (node ${process.version}, ${os.cpus().length} cpus, ${ROUNDS} rounds interleaved; sequential ${SEQ} hooks; concurrent ${CONC} sessions x ${CONC_CALLS * 2 + 4} hooks)`,
  );
  for (const t of targets) {
    const s = seq.get(t.name)!;
    const c = conc.get(t.name)!;
    const r = rates.get(t.name)!.reduce((a, b) => a + b, 0) / ROUNDS;
    const ratio = (x: number, y: number) => (t.name === base ? '' : ` (${(x / y).toFixed(2)}x)`);
    const bs = seq.get(base)!;
    const bc = conc.get(base)!;
    const br = rates.get(base)!.reduce((a, b) => a + b, 0) / ROUNDS;
    console.log(
      `  ${t.name.padEnd(22)} sequential median ${us(q(s, 0.5))}${ratio(q(s, 0.5), q(bs, 0.5))} p99 ${us(q(s, 0.99))}${ratio(q(s, 0.99), q(bs, 0.99))}`,
    );
    console.log(
      `  ${''.padEnd(22)} concurrent median ${us(q(c, 0.5))}${ratio(q(c, 0.5), q(bc, 0.5))} p99 ${us(q(c, 0.99))}${ratio(q(c, 0.99), q(bc, 0.99))}; ${r.toFixed(0)} hooks/s${ratio(r, br)}`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
