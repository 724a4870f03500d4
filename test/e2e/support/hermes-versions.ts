/**
 * The Hermes Agent releases (PyPI `hermes-agent`) the end-to-end tier runs,
 * pinned here and nowhere else: the design record's release, and the newest
 * one on PyPI when this list was last moved. The global setup provisions each
 * into its own version-keyed venv and publishes its binary as
 * `E2E_HERMES_<version with _ for .>`; the real-Hermes suite runs once per
 * entry with the same assertions. Where a release behaves differently, the
 * test says so explicitly and docs/hermes-drift.md records it.
 */
export const E2E_HERMES_VERSIONS = ['0.18.2', '0.19.0'] as const;

export type HermesVersion = (typeof E2E_HERMES_VERSIONS)[number];

/** The design record's release (the mapping was written against it). */
export const PINNED_HERMES_VERSION: HermesVersion = '0.18.2';

/** The environment variable that carries this version's `hermes` binary to the test workers. */
export function hermesBinEnv(version: string): string {
  return `E2E_HERMES_${version.replace(/[^0-9A-Za-z]/g, '_')}`;
}
