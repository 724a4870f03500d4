import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startFakeLlm, type FakeLlm } from './support/fake-llm.js';
import { makeHermesHome, runHermes } from './support/hermes.js';
import { E2E_HERMES_VERSIONS } from './support/hermes-versions.js';
import { startCollector, startJaeger, waitForTraces, type CollectorService, type FoundSpan, type JaegerService } from './support/services.js';
import { MODEL_CALLS, modelCallsStep } from './record/model-calls.js';
import { startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../support/processes.js';
import { readLogs } from '../support/stream-invariants.js';

/**
 * A real Hermes turn of two model calls with a tool call between them, through the real collector into Jaeger,
 * over each OTLP protocol the collector speaks: two `chat` spans with the calls' real durations and the token
 * counts the fake model reported, the turn's summed usage and cost, the provider on the root. The fake model's
 * price comes from an AEP_PRICES_FILE (a loopback model is never priced from the database).
 */
const PRICES = { models: [{ provider: 'custom', model: 'fake-model', input_mtok: 2, output_mtok: 8, cache_read_mtok: 0.5, cache_write_mtok: 2.5 }] };
/** USD per call by hand: uncached input × 2 + cache read × 0.5 + cache write × 2.5 + output × 8, per million */
const usd = (u: (typeof MODEL_CALLS.usage)[number]) =>
  ((u.prompt_tokens - u.cached_tokens - u.cache_write_tokens) * 2 + u.cached_tokens * 0.5 + u.cache_write_tokens * 2.5 + u.completion_tokens * 8) / 1e6;
const PROTOCOLS = ['grpc', 'http/protobuf'] as const;

let jaeger: JaegerService;
let collector: CollectorService;
let llm: FakeLlm;
const daemons: DaemonProcess[] = [];

beforeAll(async () => {
  jaeger = await startJaeger();
  collector = await startCollector({ jaegerGrpcPort: jaeger.ports.otlpGrpc });
  llm = await startFakeLlm({ steps: [modelCallsStep], auxiliaryReply: () => 'Fake session title' });
}, 120_000);
afterAll(async () => {
  for (const d of daemons) await d.stop();
  await llm?.close();
});

describe.each(E2E_HERMES_VERSIONS)('real Hermes %s: model calls as chat spans in Jaeger', (version) => {
  it.each(PROTOCOLS)(
    'over %s to the collector: two chat spans, their tokens, the turn sum and cost, the provider on the root',
    async (protocol) => {
      const service = `hermes-aep-model-calls-${version}-${protocol.replace('/', '-')}`;
      const pricesFile = path.join(tempDir('hermes-aep-prices-'), 'prices.json');
      writeFileSync(pricesFile, JSON.stringify(PRICES));
      const daemon = await startDaemonProcess({
        AEP_PORT: '',
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_EXPORTER_OTLP_ENDPOINT: protocol === 'grpc' ? collector.otlpGrpcUrl : collector.otlpHttpUrl,
        OTEL_SERVICE_NAME: service,
        AEP_PRICES_FILE: pricesFile,
      });
      daemons.push(daemon);
      const home = await makeHermesHome({ modelUrl: llm.url, hookEnv: { AEP_STATE_DIR: daemon.stateDir }, version });
      const sinceMs = Date.now() - 60_000;
      const run = await runHermes(home, ['-z', `${MODEL_CALLS.marker} run the command`]);
      expect(run.code).toBe(0);

      // the history: two model calls and the turn's end (the spans' source of truth)
      const events = await waitFor('the turn ended in the history', () => {
        const all = [...readLogs(daemon.historyDir).values()].flat();
        return all.some((e) => e.type === 'run.finished') ? all : undefined;
      });
      const calls = events.filter((e) => e.type === 'x.hermes.model.call');
      expect(calls).toHaveLength(2);
      const finished = events.find((e) => e.type === 'run.finished')!;

      const trace = await waitForTraces(jaeger.query, service, sinceMs, (traces) =>
        traces.find((t) => t.spans.filter((s) => s.name.startsWith('chat ')).length === 2 && t.spans.some((s) => s.name === 'invoke_agent hermes')),
      );
      const root = trace.spans.find((s) => s.name === 'invoke_agent hermes')!;
      const chats = trace.spans
        .filter((s) => s.name.startsWith('chat '))
        .sort((a, b) => Number(a.attributes['hermes.api_call']) - Number(b.attributes['hermes.api_call']));
      const tool = trace.spans.find((s) => s.name === 'execute_tool terminal')!;
      const ms = (s: FoundSpan) => Number((BigInt(s.endTimeUnixNano) - BigInt(s.startTimeUnixNano)) / 1_000_000n);

      for (const [i, chat] of chats.entries()) {
        const reported = MODEL_CALLS.usage[i]!;
        const ev = calls[i]!.data as Record<string, unknown>;
        expect(chat.name).toBe('chat fake-model');
        expect(chat.parentSpanId).toBe(root.spanId);
        expect(chat.attributes).toMatchObject({
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'custom',
          'gen_ai.request.model': 'fake-model',
          'hermes.api_call': i + 1,
          // what the fake model reported, in the GenAI names (input: every input token, cached ones included)
          'gen_ai.usage.input_tokens': reported.prompt_tokens,
          'gen_ai.usage.output_tokens': reported.completion_tokens,
          'gen_ai.usage.cache_read.input_tokens': reported.cached_tokens,
          'gen_ai.usage.cache_creation.input_tokens': reported.cache_write_tokens,
          'gen_ai.usage.reasoning.output_tokens': reported.reasoning_tokens,
          'session.id': finished.session,
        });
        expect(chat.attributes['aep.cost.usd']).toBeCloseTo(usd(reported), 12);
        // the span is timed by the call itself (Hermes's started_at/ended_at), not by the hook's arrival
        expect(BigInt(chat.startTimeUnixNano) / 1_000_000n).toBe(BigInt(Date.parse(ev.started_at as string)));
        expect(Math.abs(ms(chat) - (ev.duration_ms as number))).toBeLessThanOrEqual(1);
        expect(ms(chat)).toBeGreaterThan(0);
      }
      // the first call asked for the tool call: the tool span links to it, and runs after it
      expect(tool.links.map((l) => [l.spanId, l.attributes['aep.link.type']])).toContainEqual([chats[0]!.spanId, 'model_call']);
      expect(BigInt(tool.startTimeUnixNano) >= BigInt(chats[0]!.endTimeUnixNano) - 1_000_000n).toBe(true);

      // the turn: the sum over both calls, the cost of both, the provider of its first call
      const sum = (k: keyof (typeof MODEL_CALLS.usage)[number]) => MODEL_CALLS.usage.reduce((n, u) => n + u[k], 0);
      expect(root.attributes).toMatchObject({
        'gen_ai.provider.name': 'custom',
        'gen_ai.usage.input_tokens': sum('prompt_tokens'),
        'gen_ai.usage.output_tokens': sum('completion_tokens'),
        'gen_ai.usage.cache_read.input_tokens': sum('cached_tokens'),
        'gen_ai.usage.cache_creation.input_tokens': sum('cache_write_tokens'),
        'gen_ai.usage.reasoning.output_tokens': sum('reasoning_tokens'),
      });
      expect(root.attributes['aep.cost.usd']).toBeCloseTo(usd(MODEL_CALLS.usage[0]) + usd(MODEL_CALLS.usage[1]), 12);
      expect(finished.data).toMatchObject({ 'gen_ai.usage.input_tokens': sum('prompt_tokens'), cost: { currency: 'USD' } });
      // the daemon counted both calls as priced
      const health = await daemon.health();
      expect(health.cost).toMatchObject({ priced: 2 });
    },
    240_000,
  );
});
