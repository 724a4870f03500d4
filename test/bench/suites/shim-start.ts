// The hook as Hermes pays for it: the shim copy `install` lays out ({state}/shim/<version>/hook.cjs, run as
// `node <copy> --socket <path>`) delivering one envelope to a live daemon over its Unix socket, against a bare
// `node -e ''` start in the same environment, paired round by round. Also the fail-open bounds (not budgeted).
import { createServer } from 'node:http';
import path from 'node:path';
import { placeShim } from '../../../src/install/shim-copy.js';
import { packageVersion } from '../../../src/install/version.js';
import { SHIM } from '../../support/paths.js';
import { startDaemonProcess } from '../../support/processes.js';
import { scriptedSession } from '../../support/scripted-session.js';
import type { Figure, Suite } from '../bench-types.js';
import { dist, interleaved, median, ratioFigure, round, timeProcess } from '../support/stats.js';

const node = process.execPath;

export const suite: Suite = {
  name: 'shim-start',
  about: 'the installed shim copy delivering one envelope to a live daemon over its Unix socket vs a bare node start; rounds interleaved',
  async run(ctx) {
    const rounds = ctx.short ? 12 : 40;
    const daemon = await startDaemonProcess({ AEP_PORT: '' });
    const installed = await placeShim(SHIM, ctx.tmp('shim-install-'), packageVersion());
    const envs = scriptedSession().envelopes.map((e) => JSON.stringify(e));
    const spoolState = ctx.tmp('shim-spool-');
    const nowhere = path.join(spoolState, 'no-daemon.sock');
    const hung = createServer(() => undefined);
    const hungSock = path.join(ctx.tmp('shim-hung-'), 'hung.sock');
    await new Promise<void>((r) => hung.listen(hungSock, r));
    let i = 0;
    try {
      ctx.log(`shim-start: ${rounds} interleaved rounds (${installed.path.replace(/.*\/shim\//, '{state}/shim/')})`);
      const main = await interleaved(rounds, {
        bare: () => timeProcess(node, ['-e', '']),
        shim: () => timeProcess(node, [installed.path, '--socket', daemon.socketPath], process.env, envs[i++ % envs.length]),
      });
      const few = Math.max(5, Math.round(rounds / 4));
      const env = (extra: Record<string, string>) => ({ ...process.env, AEP_STATE_DIR: spoolState, ...extra });
      const open = await interleaved(few, {
        bare: () => timeProcess(node, ['-e', '']),
        spooled: () => timeProcess(node, [installed.path, '--socket', nowhere], env({}), envs[0]),
        dropped: () => timeProcess(node, [installed.path, '--socket', nowhere], env({ AEP_SPOOL_MAX_FILES: '0' }), envs[0]),
        hung: () => timeProcess(node, [installed.path, '--socket', hungSock], env({ AEP_SHIM_TIMEOUT_MS: '300' }), envs[0]),
      });
      const bare = { label: "bare `node -e ''` start", measure: dist(main.bare, 'ms') };
      const paired = main.shim.map((s, k) => s / main.bare[k]!);
      const figures: Figure[] = [
        ratioFigure(
          {
            id: 'shim.start',
            label: 'installed shim → live daemon (Unix socket), one hook',
            measure: dist(main.shim, 'ms'),
            yardstick: bare,
            detail: {
              paired_ratio_median: round(median(paired)),
              added_ms: round(median(main.shim) - median(main.bare), 1),
              node: process.version,
              node_extra_ca_certs: Boolean(process.env.NODE_EXTRA_CA_CERTS),
            },
          },
          { max: 1.3 },
        ),
      ];
      const openBare = { label: "bare `node -e ''` start (same rounds)", measure: dist(open.bare, 'ms') };
      for (const [id, label, xs] of [
        ['shim.down_spooled', 'shim, daemon down → hook spooled', open.spooled],
        ['shim.down_dropped', 'shim, daemon down, spool full → dropped and counted', open.dropped],
        ['shim.hung_300ms', 'shim, daemon hung, AEP_SHIM_TIMEOUT_MS=300 (bound: start + timeout)', open.hung],
      ] as const) {
        figures.push(ratioFigure({ id, label, measure: dist(xs, 'ms'), yardstick: openBare }));
      }
      return figures;
    } finally {
      hung.closeAllConnections();
      hung.close();
      await daemon.stop();
    }
  },
};
