import { InMemoryLogRecordExporter } from '@opentelemetry/sdk-logs';
import { JsonLogsSerializer, ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import { describe, expect, it } from 'vitest';
import { AepLogSink } from '../../../../src/otel/logs/log-sink.js';
import { loadLogsConfig } from '../../../../src/otel/logs/logs-config.js';
import { CAPTURE_LEVELS, captureRank, type CaptureLevel } from '../../../../src/core/capture-levels.js';
import { inProcessDaemon } from '../../../support/in-process-daemon.js';
import { MARKER, scriptedSession, type Envelope } from '../../../support/scripted-session.js';

const SECRETS = ['AKIAIOSFODNN7EXAMPLE', 'ghp_AbCdEfGhIjKlMnOpQrStUvWxYz012345', 'hunter2sequel'];
const secretText = `deploy with ${SECRETS[0]} and ${SECRETS[1]}, password: ${SECRETS[2]}`;
const withSecrets = (envs: readonly Envelope[]): Envelope[] => JSON.parse(JSON.stringify(envs).split(MARKER).join(secretText)) as Envelope[];

/** Every byte the bridge would send (OTLP/JSON and OTLP/protobuf) for a scripted session at AEP capture `aep` and bridge ceiling `ceiling`. */
async function exportedBytes(aep: CaptureLevel, ceiling: CaptureLevel, envelopes: readonly Envelope[]) {
  const exporter = new InMemoryLogRecordExporter();
  const sink = new AepLogSink({
    config: loadLogsConfig({ OTEL_LOGS_EXPORTER: 'otlp', AEP_OTEL_LOGS_CAPTURE: ceiling, OTEL_BLRP_SCHEDULE_DELAY: '0' }),
    exporter,
    agent: 'hermes',
    version: 'test',
  });
  const d = inProcessDaemon({ consumers: [sink], policy: { ceiling: aep, categories: { attention: aep }, redact: { home: '/home/dev' }, agent: 'hermes' } });
  for (const e of envelopes) expect((await d.app.inject({ method: 'POST', url: '/hook', payload: e })).statusCode).toBe(200);
  await sink.flush();
  const records = exporter.getFinishedLogRecords();
  const json = Buffer.from(JsonLogsSerializer.serializeRequest(records) ?? new Uint8Array()).toString('utf8');
  const proto = Buffer.from(ProtobufLogsSerializer.serializeRequest(records) ?? new Uint8Array()).toString('latin1');
  await d.app.close();
  await sink.shutdown();
  return { text: json + proto, records: records.length, events: d.memory.events.length };
}

const pairs = CAPTURE_LEVELS.flatMap((aep) => CAPTURE_LEVELS.map((ceiling) => [aep, ceiling] as const));

describe('capture honesty at the log bridge egress (planted markers), every level pair', () => {
  const plain = scriptedSession().envelopes;

  it.each(pairs)('AEP capture %s, AEP_OTEL_LOGS_CAPTURE %s: content leaves only when both admit it', async (aep, ceiling) => {
    const { text, records, events } = await exportedBytes(aep, ceiling, plain);
    expect(records).toBe(events);
    // content (redacted or verbatim) is emitted at redacted and above, and exported only at or below the ceiling
    const admitted = captureRank(aep) >= captureRank('redacted') && captureRank(ceiling) >= captureRank(aep);
    if (admitted) expect(text).toContain(MARKER);
    else expect(text).not.toContain(MARKER);
  });

  it.each([
    ['redacted', 'redacted'],
    ['redacted', 'full'],
    ['full', 'redacted'],
    ['full', 'metadata'],
  ] as const)('AEP capture %s, ceiling %s: planted secrets never leave', async (aep, ceiling) => {
    const { text } = await exportedBytes(aep, ceiling, withSecrets(plain));
    for (const s of SECRETS) expect(text).not.toContain(s);
  });
});
