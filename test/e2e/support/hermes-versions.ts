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

/**
 * What each release does differently, as the e2e suite asserts it (read from
 * the release's own source and seen live; docs/hermes-drift.md has the table).
 * Typed per version: adding a release to E2E_HERMES_VERSIONS does not compile
 * until someone states its truth here.
 */
export interface HermesDrift {
  /** `approvals.mode: smart` is the default: an auxiliary model reviews a flagged command first (approval hooks with `surface: "smart"`) */
  readonly smartApprovals: boolean;
  /** `hermes -z` runs `delegate_task` inline: the child finishes (`subagent_stop`) inside the tool call */
  readonly oneshotDelegationInline: boolean;
}

export const HERMES_DRIFT: Readonly<Record<HermesVersion, HermesDrift>> = {
  '0.18.2': { smartApprovals: false, oneshotDelegationInline: false },
  '0.19.0': { smartApprovals: true, oneshotDelegationInline: true },
};
