/** The versions this endpoint speaks (AEP-0003 §3.2.2): the 426 body lists them. */
export const SUPPORTED_VERSIONS = ['0.1'] as const;
export const VERSION_REFUSAL = { versions: [...SUPPORTED_VERSIONS] };

/** Whether an `AEP-Version` header names a major version this endpoint speaks (absent or malformed: no). */
export function versionSupported(header: string | string[] | undefined): boolean {
  const v = Array.isArray(header) ? header[0] : header;
  const m = /^\s*(\d+)\.(\d+)\s*$/.exec(v ?? '');
  return m !== null && Number(m[1]) === 0;
}
