/**
 * `x-hermes-aep-spool-key`: the name (without `.hook`) the shim or the plugin
 * will spool a hook under if the daemon answers 5xx, chosen BEFORE sending
 * (spool-format.ts has the layout). The daemon tags the events of a hook it
 * held after a failed write with it, so the spooled copy is recognised.
 */
export const SPOOL_KEY_HEADER = 'x-hermes-aep-spool-key';

/** a spool file name's stem: 15-digit arrival ms, 20-digit monotonic ns, pid, random */
export const SPOOL_KEY = /^\d{15}-\d{20}-\d{1,10}-[a-z0-9]{0,16}$/;

/** The header's key; `undefined` when absent; `false` when malformed (refused 400, as a bad drop report is). */
export function readSpoolKey(raw: string | string[] | undefined): string | undefined | false {
  if (raw === undefined) return undefined;
  return typeof raw === 'string' && SPOOL_KEY.test(raw) ? raw : false;
}
