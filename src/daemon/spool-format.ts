import { z } from 'zod';
import { DEFAULT_MAX_BODY_NODES } from '../config/config.js';
import { hookEnvelopeSchema, type HookEnvelope } from '../hermes/envelope.js';
import { BodyRefusal, parseBounded } from '../transport/json-body.js';
import type { ScanLimits } from '../transport/json-scan.js';
import { MAX_DEPTH } from '../core/limits.js';

/**
 * The spool: hooks the shim could not deliver (daemon down, starting,
 * closing), one file each, written by the shim (src/shim/hook.cts):
 *
 *   {stateDir}/spool/<key>.hook     key = 15-digit arrival ms, 20-digit monotonic ns, pid, random:
 *                                   lexical order = arrival order
 *   {stateDir}/spool/.<key>.tmp     a shim still writing it (renamed to <key>.hook when whole)
 *   {stateDir}/spool/in.files, in.kib, out.files, out.kib
 *                                   the cap's ledgers: each counts by its SIZE (one byte per file,
 *                                   one per KiB); shims append `in.*`, the daemon `out.*`
 *   {stateDir}/spool/dropped        one byte per hook a shim dropped (spool full, disk error)
 *   {stateDir}/spool/dropped.<key>  an empty file per hook a shim dropped when not even that byte could be
 *                                   appended (a full disk); counted with `dropped`, folded into it by the daemon
 *   {stateDir}/spool/rejected/      files that could not be ingested, moved aside (content-bearing)
 *
 * A `.hook` file is one JSON header line `{"spool":1,"arrival":ISO,"arrival_ms":n,"bytes":n}`,
 * then exactly `bytes` bytes of the envelope as Hermes wrote it.
 */
export const HOOK_FILE = /^(\d{15}-\d{20}-\d{1,10}-[a-z0-9]{0,16})\.hook$/;
export const TMP_FILE = /^\.(\d{15}-\d{20}-\d{1,10}-[a-z0-9]{0,16})\.tmp$/;
export const DROP_MARK = /^dropped\.\d{15}-\d{20}-\d{1,10}-[a-z0-9]{0,16}$/;
export const HEADER_MAX = 512;

/** the first line of a `.hook` file */
const headerSchema = z.object({
  spool: z.literal(1),
  arrival_ms: z.number().int().min(0).max(8.64e15),
  bytes: z.number().int().min(0),
});

/** A spool file that cannot be ingested: moved aside, with this reason. */
export class Rejected extends Error {}

/**
 * A spool file's bytes → the envelope, validated exactly as a live body is: the
 * same bounded parse (node cap, depth, poison keys: json-body.ts) and schema.
 */
export function decode(
  buf: Buffer,
  limits: ScanLimits = { maxNodes: DEFAULT_MAX_BODY_NODES, maxDepth: MAX_DEPTH },
): { raw: unknown; env: HookEnvelope; arrival: Date } {
  const nl = buf.indexOf(10);
  if (nl < 0 || nl > HEADER_MAX) throw new Rejected('no header line');
  let header: z.infer<typeof headerSchema>;
  try {
    header = headerSchema.parse(JSON.parse(buf.subarray(0, nl).toString('utf8')));
  } catch {
    throw new Rejected('bad header');
  }
  const body = buf.subarray(nl + 1);
  if (body.length !== header.bytes) throw new Rejected('torn: body length differs from the header');
  let raw: unknown;
  try {
    raw = parseBounded(body, limits);
  } catch (err) {
    if (err instanceof BodyRefusal)
      throw new Rejected(
        err.code === 'too-deep'
          ? `body nests deeper than ${MAX_DEPTH} levels`
          : err.code === 'too-many-nodes'
            ? 'more JSON values and keys than AEP_MAX_BODY_NODES'
            : 'body is empty',
      );
    throw new Rejected('body is not valid JSON');
  }
  const env = hookEnvelopeSchema.safeParse(raw);
  if (!env.success) throw new Rejected('not a Hermes hook envelope');
  return { raw, env: env.data, arrival: new Date(header.arrival_ms) };
}
