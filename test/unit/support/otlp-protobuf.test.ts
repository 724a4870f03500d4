import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { describe, expect, it } from 'vitest';
import { CONTENT_ON, mirroredDaemon } from '../../support/otel-harness.js';
import { decodeResourceSpans } from '../../support/otlp-json.js';
import { protobufResourceSpans } from '../../support/otlp-protobuf.js';
import { scriptedSession } from '../../support/scripted-session.js';

/** The test receiver's protobuf reader, checked against the SDK's own serializers: the same spans either way. */
describe('the protobuf reader of the test receiver', () => {
  it('reads what ProtobufTraceSerializer writes as decodeResourceSpans reads the JSON of the same spans', async () => {
    const h = await mirroredDaemon(CONTENT_ON);
    try {
      await h.feed(scriptedSession().envelopes);
      const spans = h.spans();
      expect(spans.length).toBeGreaterThan(5);
      const json = JSON.parse(Buffer.from(JsonTraceSerializer.serializeRequest(spans)!).toString('utf8')) as { resourceSpans: any[] };
      const fromJson = decodeResourceSpans(json.resourceSpans);
      const fromProtobuf = decodeResourceSpans(protobufResourceSpans(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans)!)));
      expect(fromProtobuf).toEqual(fromJson);
      // not vacuous: links, events with attributes, error statuses and typed values came through
      expect(fromProtobuf.some((s) => s.links.length > 0 && Object.keys(s.links[0]!.attributes).length > 0)).toBe(true);
      expect(fromProtobuf.some((s) => s.events.some((e) => typeof e.attributes['aep.sequence'] === 'number'))).toBe(true);
      expect(fromProtobuf.filter((s) => s.status.code === 2).length).toBe(3);
      expect(fromProtobuf.every((s) => s.resource['service.name'] === 'hermes-aep')).toBe(true);
    } finally {
      await h.app.close();
      await h.mirror.shutdown();
    }
  });
});
