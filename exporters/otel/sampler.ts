/**
 * `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG`, decided once per TRACE
 * from its (deterministic) trace id: every span of a turn shares the root's
 * decision, and the same turn gets the same decision after a restart.
 *
 * The decisions are the OpenTelemetry SDK's own (its samplers are checked
 * against these in test/unit/otel/sampler.test.ts), computed here without
 * loading the SDK: the daemon decides while it rebuilds its state at start,
 * before the SDK (about 200 modules) is needed for exporting. Every span
 * this daemon starts is a root, so the `parentbased_*` samplers are their
 * root sampler.
 */
export type TraceSampler = (traceId: string) => boolean;

const VALID_TRACE_ID = /^[0-9a-f]{32}$/i;
const INVALID_TRACE_ID = '00000000000000000000000000000000';

/** The SDK's TraceIdRatioBasedSampler: the trace id's four 32-bit words XORed, below ratio × 2^32. */
function ratioSampler(ratio: number): TraceSampler {
  const r = Number.isNaN(ratio) ? 0 : Math.min(1, Math.max(0, ratio));
  const upper = r === 1 ? 0x100000000 : Math.floor(r * 0xffffffff);
  return (traceId) => {
    if (!VALID_TRACE_ID.test(traceId) || traceId === INVALID_TRACE_ID) return false;
    let acc = 0;
    for (let i = 0; i < 32; i += 8) acc = (acc ^ Number.parseInt(traceId.slice(i, i + 8), 16)) >>> 0;
    return acc < upper;
  };
}

export function samplerFromEnv(env: NodeJS.ProcessEnv = process.env): TraceSampler {
  const name = (env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on').trim().toLowerCase();
  const arg = Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1');
  const ratio = Number.isFinite(arg) && arg >= 0 && arg <= 1 ? arg : 1;
  switch (name) {
    case 'always_on':
      return () => true;
    case 'always_off':
    case 'parentbased_always_off':
      return () => false;
    case 'traceidratio':
    case 'parentbased_traceidratio':
      return ratioSampler(ratio);
    case 'parentbased_always_on':
    default:
      // unknown names fall back to the spec default rather than silently dropping traces
      return () => true;
  }
}
