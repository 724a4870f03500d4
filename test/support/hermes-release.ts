/** The PyPI hermes-agent releases `doctor` is checked against in the integration tier (provisioned by test/prereqs before it runs). */
export const DOCTOR_HERMES_RELEASES: readonly string[] = ['0.18.2', '0.19.0'];
