/**
 * What the unit and integration tiers use that comes from a registry, not from node_modules: each is installed once into the
 * version-keyed cache by its scripts/provision-*.sh, which `npm test` runs here BEFORE any test (test/prereqs/run.ts).
 * The tests themselves only read the cache (`--cached`), so a missing registry is one message up front, never a silent wait.
 */
import { OLD_NODE_RELEASES } from '../support/node-release.js';
import { DOCTOR_HERMES_RELEASES } from '../support/hermes-release.js';

export type Registry = 'npm' | 'pypi';

export interface Need {
  /** for the progress line: "Node 18.20.8 for the old-node shim tests" */
  label: string;
  /** the cache directory's name under HERMES_AEP_CACHE, for the failure message */
  cacheDir: string;
  /** what is fetched, and from where */
  fetched: string;
  registry: Registry;
  /** what a first install usually takes, for the progress line */
  typical: string;
  /** the longest a first install may take before it is stopped and reported */
  boundMs: number;
  script: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
}

export const NEEDS: readonly Need[] = [
  ...OLD_NODE_RELEASES.map((release): Need => ({
    label: `Node ${release} for the old-node shim tests`,
    cacheDir: `node-${release}`,
    fetched: `the npm package node@${release}`,
    registry: 'npm',
    typical: '~8 s',
    boundMs: 90_000,
    script: 'provision-node.sh',
    args: [release],
    env: {},
  })),
  ...DOCTOR_HERMES_RELEASES.map((release): Need => ({
    label: `Hermes ${release} for the doctor tests`,
    cacheDir: `hermes-${release}`,
    fetched: `the PyPI package hermes-agent==${release} and its dependencies`,
    registry: 'pypi',
    typical: 'a few minutes',
    boundMs: 15 * 60_000,
    script: 'provision-hermes.sh',
    args: [],
    env: { HERMES_VERSION: release },
  })),
];

/**
 * How npm and pip are told to give up quickly when the registry does not answer (their defaults retry for minutes):
 * one retry, short back-off, a per-request timeout. A reachable registry is not affected.
 */
export const FETCH_LIMITS: Readonly<Record<string, string>> = {
  npm_config_fetch_retries: '1',
  npm_config_fetch_retry_mintimeout: '2000',
  npm_config_fetch_retry_maxtimeout: '5000',
  npm_config_fetch_timeout: '30000',
  PIP_RETRIES: '1',
  PIP_TIMEOUT: '20',
  PIP_DISABLE_PIP_VERSION_CHECK: '1',
};
