import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace';
import { loadOtelConfig } from '../../../src/otel/otel-config.js';
import { createSampler } from '../../../src/otel/sampler.js';

/** The sampler the daemon builds: from the OTel config read from these settings. */
const daemonSampler = (env: NodeJS.ProcessEnv) => createSampler(loadOtelConfig('/logs', env).sampler);

/** What the SDK decides for a root span of this trace. */
const sdk = (s: Sampler) => (traceId: string) =>
  s.shouldSample(ROOT_CONTEXT, traceId, 'invoke_agent hermes', SpanKind.INTERNAL, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED;

describe('the sampler decides as the OpenTelemetry SDK does (without loading it at start)', () => {
  const hex = fc.stringMatching(/^[0-9a-f]{32}$/);
  it('for every sampler name, ratio and trace id', () => {
    fc.assert(
      fc.property(hex, fc.double({ min: 0, max: 1, noNaN: true }), (traceId, ratio) => {
        const arg = String(ratio);
        const cases: [string, Sampler][] = [
          ['always_on', new AlwaysOnSampler()],
          ['always_off', new AlwaysOffSampler()],
          ['traceidratio', new TraceIdRatioBasedSampler(Number(arg))],
          ['parentbased_always_on', new ParentBasedSampler({ root: new AlwaysOnSampler() })],
          ['parentbased_always_off', new ParentBasedSampler({ root: new AlwaysOffSampler() })],
          ['parentbased_traceidratio', new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(Number(arg)) })],
        ];
        for (const [name, s] of cases) {
          expect(daemonSampler({ OTEL_TRACES_SAMPLER: name, OTEL_TRACES_SAMPLER_ARG: arg })(traceId)).toBe(sdk(s)(traceId));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('at the edges: ratio 0 and 1, the all-zero id, upper-case hex', () => {
    for (const id of [
      '00000000000000000000000000000000',
      'ffffffffffffffffffffffffffffffff',
      'FFFFFFFF00000000FFFFFFFF00000001',
      '0af7651916cd43dd8448eb211c80319c',
    ]) {
      for (const r of [0, 1, 0.5]) {
        expect(daemonSampler({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: String(r) })(id)).toBe(sdk(new TraceIdRatioBasedSampler(r))(id));
      }
    }
  });

  it('unset: parentbased_always_on (every trace); the ratio defaults to 1', () => {
    const id = '0af7651916cd43dd8448eb211c80319c';
    expect(daemonSampler({})(id)).toBe(true);
    expect(daemonSampler({ OTEL_TRACES_SAMPLER: 'traceidratio' })(id)).toBe(true);
    expect(daemonSampler({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })(id)).toBe(false);
  });
});
