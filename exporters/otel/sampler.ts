import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-base';

/**
 * `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG`, decided once per TRACE
 * from its (deterministic) trace id: every span of a turn shares the root's
 * decision, and the same turn gets the same decision after a restart.
 */
export type TraceSampler = (traceId: string) => boolean;

export function samplerFromEnv(env: NodeJS.ProcessEnv = process.env): TraceSampler {
  const name = (env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on').trim().toLowerCase();
  const arg = Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1');
  const ratio = Number.isFinite(arg) && arg >= 0 && arg <= 1 ? arg : 1;
  let sampler: Sampler;
  switch (name) {
    case 'always_on':
      sampler = new AlwaysOnSampler();
      break;
    case 'always_off':
      sampler = new AlwaysOffSampler();
      break;
    case 'traceidratio':
      sampler = new TraceIdRatioBasedSampler(ratio);
      break;
    case 'parentbased_always_off':
      sampler = new ParentBasedSampler({ root: new AlwaysOffSampler() });
      break;
    case 'parentbased_traceidratio':
      sampler = new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
      break;
    case 'parentbased_always_on':
    default:
      // unknown names fall back to the spec default rather than silently dropping traces
      sampler = new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
  return (traceId) =>
    sampler.shouldSample(ROOT_CONTEXT, traceId, 'invoke_agent hermes', SpanKind.INTERNAL, {}, []).decision ===
    SamplingDecision.RECORD_AND_SAMPLED;
}
