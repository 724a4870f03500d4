import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

// The unit, integration and fault tiers run with a throwaway HOME, so nothing they start (a shim that
// falls back to ~/.aep/state/hermes-aep, a daemon with default dirs) can touch the user's
// real history, spool or state, or reach a daemon the user is running.
// The provisioning cache (Node releases for the old-node shim test) stays the real one: it is
// read back by version, never written with anything of the user's.
const isolatedHome = {
  HOME: mkdtempSync(path.join(os.tmpdir(), 'hermes-aep-test-home-')),
  HERMES_AEP_CACHE: process.env.HERMES_AEP_CACHE || path.join(os.homedir(), '.cache', 'hermes-aep'),
};

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          // in process only: no child process, no Python, nothing from a build (dist/)
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          env: isolatedHome,
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        test: {
          // real processes: the built daemon, shim, CLI and installer, the Python plugin, sockets between them
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          env: isolatedHome,
          testTimeout: 30_000,
          // setup that starts daemons (restart-mid-turn: two daemons, a kill, ~20 shim runs) takes ~8 s on an idle
          // 2-core machine: the 10 s default fails it whenever the machine is shared
          hookTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          env: isolatedHome,
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // fault tests kill processes, fill filesystems and time stalls: one file at a time
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/e2e/global-setup.ts'],
          testTimeout: 600_000,
          hookTimeout: 1_800_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          // a real container engine (our own dockerd) and the Compose plugin: `npm run test:compose`, as root
          name: 'compose',
          include: ['test/compose/**/*.test.ts'],
          globalSetup: ['test/compose/global-setup.ts'],
          testTimeout: 600_000,
          hookTimeout: 1_800_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
