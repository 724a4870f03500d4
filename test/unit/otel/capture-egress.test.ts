import { describe, expect, it } from 'vitest';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { mirroredDaemon } from '../../support/otel-harness.js';
import { MARKER, scriptedSession, type Envelope } from '../../support/scripted-session.js';
import type { CaptureLevel } from '../../../src/core/capture-levels.js';

/** Secrets the §9.4 pipeline must remove, planted in every content field Hermes sends. */
const SECRETS = ['AKIAIOSFODNN7EXAMPLE', 'ghp_AbCdEfGhIjKlMnOpQrStUvWxYz012345', 'hunter2sequel', 'ops@example.com'];
/** The GenAI content attributes (input/output messages on runs and chat spans, tool arguments and results). */
const CONTENT_ATTRS = ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result'];
const secretText = `deploy with AKIAIOSFODNN7EXAMPLE and ghp_AbCdEfGhIjKlMnOpQrStUvWxYz012345, password: hunter2sequel, mail ops@example.com`;

function withSecrets(envs: readonly Envelope[]): Envelope[] {
  const swap = (v: unknown): unknown =>
    typeof v === 'string'
      ? v.split(MARKER).join(secretText)
      : Array.isArray(v)
        ? v.map(swap)
        : v && typeof v === 'object'
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, swap(x)]))
          : v;
  return envs.map((e) => swap(e) as Envelope);
}

async function exportedBytes(aep: CaptureLevel, otel: CaptureLevel, envelopes: readonly Envelope[]): Promise<{ text: string; spans: number }> {
  const h = await mirroredDaemon({
    env: { AEP_OTEL_CAPTURE: otel },
    policy: { ceiling: aep, categories: { attention: aep }, redact: { home: '/home/dev' }, agent: 'hermes' },
  });
  await h.feed(envelopes);
  const spans = h.spans();
  const text = Buffer.from(JsonTraceSerializer.serializeRequest(spans) ?? new Uint8Array()).toString('utf8');
  await h.app.close();
  await h.mirror.shutdown();
  return { text, spans: spans.length };
}

describe('capture honesty at the OTel egress (planted markers)', () => {
  const plain = scriptedSession().envelopes;

  it.each([
    ['metadata', 'metadata'],
    ['full', 'metadata'],
    ['metadata', 'full'],
    ['redacted', 'metadata'],
  ] as const)('AEP capture %s, exporter ceiling %s: no content marker in any exported byte', async (aep, otel) => {
    const { text, spans } = await exportedBytes(aep, otel, plain);
    expect(spans).toBeGreaterThan(10);
    expect(text).not.toContain(MARKER);
    expect(text).not.toContain('aep.data');
  });

  it.each([
    ['none', 'full'],
    ['metadata', 'redacted'],
    ['full', 'metadata'],
  ] as const)('AEP capture %s, exporter ceiling %s: no GenAI content attribute at all', async (aep, otel) => {
    const { text } = await exportedBytes(aep, otel, plain);
    for (const name of CONTENT_ATTRS) expect(text).not.toContain(`"${name}"`);
  });

  it('at full on both sides: the content attributes carry the content verbatim, in the GenAI shapes', async () => {
    const { text } = await exportedBytes('full', 'full', plain);
    for (const name of CONTENT_ATTRS) expect(text).toContain(`"${name}"`);
    expect(text).toContain(MARKER);
  });

  it('at redacted on both sides: redacted text rides as aep.data, secrets never, full-only fields never', async () => {
    const { text } = await exportedBytes('redacted', 'redacted', withSecrets(plain));
    // the content attributes too, redacted
    for (const name of CONTENT_ATTRS) expect(text).toContain(`"${name}"`);
    expect(text).toContain('aep.data');
    expect(text).toContain('[REDACTED:secret]');
    for (const s of SECRETS) expect(text).not.toContain(s);
    expect(text).not.toMatch(/\\"(args|result)\\":/);
  });

  it('at full events with a redacted exporter: down-leveled to redacted, secrets and full-only fields never leave', async () => {
    const { text } = await exportedBytes('full', 'redacted', withSecrets(plain));
    // a mechanical hop cannot mint `redacted` from full content (AEP-0001 §8.2e): it lands on metadata
    for (const s of SECRETS) expect(text).not.toContain(s);
    expect(text).not.toMatch(/\\"(args|result)\\":/);
  });
});
