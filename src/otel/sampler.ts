import { z } from 'zod';
import { decimal, oneOf, readEnv } from '../config/read-env.js';

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
  const r = Math.min(1, Math.max(0, ratio));
  const upper = r === 1 ? 0x100000000 : Math.floor(r * 0xffffffff);
  return (traceId) => {
    if (!VALID_TRACE_ID.test(traceId) || traceId === INVALID_TRACE_ID) return false;
    let acc = 0;
    for (let i = 0; i < 32; i += 8) acc = (acc ^ Number.parseInt(traceId.slice(i, i + 8), 16)) >>> 0;
    return acc < upper;
  };
}

/** The `OTEL_TRACES_SAMPLER` values this daemon implements (the spec's, less `jaeger_remote` and `xray`). */
export const SAMPLER_NAMES = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/** The sampler of the OTel config: a name and the ratio for the `*traceidratio` ones. */
export interface SamplerSpec {
  readonly name: (typeof SAMPLER_NAMES)[number];
  /** OTEL_TRACES_SAMPLER_ARG, 0..1 (default 1) */
  readonly ratio: number;
}

/** The sampler variables, read like every other setting (the OTel config includes them). */
export const samplerSettings = {
  OTEL_TRACES_SAMPLER: oneOf(SAMPLER_NAMES).default('parentbased_always_on'),
  OTEL_TRACES_SAMPLER_ARG: decimal(0, 1).default(1),
};

export const samplerSpec = (e: { OTEL_TRACES_SAMPLER: SamplerSpec['name']; OTEL_TRACES_SAMPLER_ARG: number }): SamplerSpec => ({
  name: e.OTEL_TRACES_SAMPLER,
  ratio: e.OTEL_TRACES_SAMPLER_ARG,
});

export function createSampler(spec: SamplerSpec): TraceSampler {
  switch (spec.name) {
    case 'always_on':
    case 'parentbased_always_on':
      return () => true;
    case 'always_off':
    case 'parentbased_always_off':
      return () => false;
    case 'traceidratio':
    case 'parentbased_traceidratio':
      return ratioSampler(spec.ratio);
  }
}

/** The sampler the settings in `env` describe (throws ConfigError like the daemon's start). */
export function samplerFromEnv(env: NodeJS.ProcessEnv): TraceSampler {
  return createSampler(readEnv(z.object(samplerSettings).transform(samplerSpec), env));
}
