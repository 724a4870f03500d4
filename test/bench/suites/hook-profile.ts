// Where one hook's time goes on the shell transport (issue 10, item 5), measured, not guessed: differences of
// whole runs for the parts outside the daemon (node running an empty file; node loading the shim file without running it;
// the shim with an empty stdin; the shim delivering a hook; one fresh-connection POST from a warm client), and the
// daemon's own stages timed inside the real daemon (pipeline worker): parse (JSON + envelope schema), map (the
// pure mapping), identity and span context (the rest of the synchronous pipeline), write (until the OS has it).
// No instrumentation in the shim: nothing it does changes for this.
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { placeShim } from '../../../src/install/shim-copy.js';
import { packageVersion } from '../../../src/install/version.js';
import { SHIM } from '../../support/paths.js';
import { startDaemonProcess } from '../../support/processes.js';
import { scriptedSession } from '../../support/scripted-session.js';
import type { Suite } from '../bench-types.js';
import { dist, interleaved, median, round, timeProcess } from '../support/stats.js';
import { runPipelineWorker } from '../support/worker.js';

/** One POST over a fresh connection (as the shim makes it), from this warm process: ms to the whole answer. */
function freshPost(socketPath: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(
      {
        socketPath,
        path: '/hook',
        method: 'POST',
        agent: false,
        headers: { host: 'localhost', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(performance.now() - t0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface StageTimes {
  parseMs: number[];
  mapMs: number[];
  syncMs: number[];
  writeMs: number[];
}

export const suite: Suite = {
  name: 'hook-profile',
  about: 'one hook on the shell transport split into phases: external differences of whole runs, plus the daemon stages timed in the real daemon',
  async run(ctx) {
    const rounds = ctx.short ? 10 : 30;
    const root = ctx.tmp('profile-');
    const daemon = await startDaemonProcess({ AEP_PORT: '', OTEL_TRACES_EXPORTER: 'file' });
    const shim = (await placeShim(SHIM, ctx.tmp('profile-install-'), packageVersion())).path;
    // files, not `-e`: node runs a file faster than an eval string, and the shim is a file
    const empty = path.join(root, 'empty.cjs');
    const loader = path.join(root, 'load.cjs');
    writeFileSync(empty, '');
    writeFileSync(loader, `require(${JSON.stringify(shim)});\n`);
    const envs = scriptedSession().envelopes.map((e) => JSON.stringify(e));
    let i = 0;
    let j = 0;
    const node = process.execPath;
    let r;
    try {
      ctx.log(`hook-profile: ${rounds} interleaved rounds`);
      r = await interleaved(rounds, {
        bare: () => timeProcess(node, [empty]),
        load: () => timeProcess(node, [loader]),
        empty: () => timeProcess(node, [shim, '--socket', daemon.socketPath], process.env, ''),
        full: () => timeProcess(node, [shim, '--socket', daemon.socketPath], process.env, envs[i++ % envs.length]),
        warm: () => freshPost(daemon.socketPath, envs[j++ % envs.length]!),
      });
    } finally {
      await daemon.stop();
    }
    const st = await runPipelineWorker<StageTimes>(['profile', ctx.short ? '600' : '3000'], ctx.tmp('profile-daemon-'));
    const m = (xs: number[]) => median(xs);
    const [bare, load, emptyStdin, full, warm] = [m(r.bare), m(r.load), m(r.empty), m(r.full), m(r.warm)];
    const [parse, map, sync, write] = [m(st.parseMs), m(st.mapMs), m(st.syncMs), m(st.writeMs)];
    const daemonMs = parse + sync + write;
    const parts: [string, number][] = [
      ['spawn and runtime start (node running an empty file)', bare],
      ['shim module load (hook.cjs, node:net, node:fs)', load - bare],
      ['stdin read, target, answer, exit', emptyStdin - load],
      ['connect and exchange from a fresh process (node:net, one request)', full - emptyStdin - warm],
      ['socket, fastify routing, body read, reply', warm - daemonMs],
      ['daemon: parse (JSON, envelope schema)', parse],
      ['daemon: map (pure mapping)', map],
      ['daemon: identity, span context, publish', sync - map],
      ['daemon: write (until the OS has it)', write],
    ];
    const phases = parts.map(([phase, ms]) => ({ phase, ms: round(ms, 2), share: round(ms / full, 3) }));
    return [
      {
        id: 'hook.profile',
        label: 'one hook on the shell transport (installed shim → daemon)',
        measure: dist(r.full, 'ms'),
        yardstick: { label: 'node running an empty file', measure: dist(r.bare, 'ms') },
        ratio: round(full / bare),
        detail: {
          phases,
          method: 'medians of interleaved whole runs, differenced; daemon stages from the real daemon in process, hooks one at a time',
          medians_ms: {
            bare: round(bare, 2),
            load: round(load, 2),
            empty_stdin: round(emptyStdin, 2),
            full: round(full, 2),
            warm_fresh_connection_post: round(warm, 3),
          },
          daemon_stage_hooks: st.parseMs.length,
        },
      },
    ];
  },
};
