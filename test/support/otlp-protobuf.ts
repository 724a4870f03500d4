/**
 * An OTLP/protobuf `ExportTraceServiceRequest` read back into the OTLP/JSON
 * shape (hex ids, decimal nanoseconds, typed AnyValues), so a receiver of
 * protobuf bodies checks the same span tree `decodeResourceSpans` gives for
 * JSON ones. Test-only: the fields of opentelemetry/proto/trace/v1 and
 * common/v1 a span of this daemon can carry, by their field numbers; unknown
 * fields are skipped by wire type, as protobuf readers do.
 */

type Field = { no: number; wire: number; varint?: bigint; bytes?: Buffer; fixed?: Buffer };

function* fields(buf: Buffer): Generator<Field> {
  let at = 0;
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at >= buf.length) throw new Error('protobuf: truncated varint');
      const b = buf[at++]!;
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
    }
  };
  const take = (n: number): Buffer => {
    if (at + n > buf.length) throw new Error('protobuf: truncated field');
    const out = buf.subarray(at, at + n);
    at += n;
    return out;
  };
  while (at < buf.length) {
    const key = varint();
    const no = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) yield { no, wire, varint: varint() };
    else if (wire === 1) yield { no, wire, fixed: take(8) };
    else if (wire === 2) yield { no, wire, bytes: take(Number(varint())) };
    else if (wire === 5) yield { no, wire, fixed: take(4) };
    else throw new Error(`protobuf: wire type ${wire} (field ${no})`);
  }
}

const str = (f: Field) => f.bytes!.toString('utf8');
const hex = (f: Field) => f.bytes!.toString('hex');
const fixed64 = (f: Field) => f.fixed!.readBigUInt64LE().toString();

function anyValue(buf: Buffer): Record<string, unknown> {
  for (const f of fields(buf)) {
    switch (f.no) {
      case 1:
        return { stringValue: str(f) };
      case 2:
        return { boolValue: f.varint !== 0n };
      case 3:
        return { intValue: String(BigInt.asIntN(64, f.varint!)) };
      case 4:
        return { doubleValue: f.fixed!.readDoubleLE() };
      case 5:
        return { arrayValue: { values: [...fields(f.bytes!)].filter((v) => v.no === 1).map((v) => anyValue(v.bytes!)) } };
      case 6:
        return { kvlistValue: { values: attributes(f.bytes!, 1) } };
    }
  }
  return {};
}

function keyValue(buf: Buffer): { key: string; value?: Record<string, unknown> } {
  const kv: { key: string; value?: Record<string, unknown> } = { key: '' };
  for (const f of fields(buf)) {
    if (f.no === 1) kv.key = str(f);
    else if (f.no === 2) kv.value = anyValue(f.bytes!);
  }
  return kv;
}

function attributes(buf: Buffer, no: number): { key: string; value?: Record<string, unknown> }[] {
  return [...fields(buf)].filter((f) => f.no === no).map((f) => keyValue(f.bytes!));
}

function span(buf: Buffer): Record<string, unknown> {
  const s: Record<string, unknown> = { attributes: attributes(buf, 9), events: [], links: [], status: {} };
  for (const f of fields(buf)) {
    if (f.no === 1) s.traceId = hex(f);
    else if (f.no === 2) s.spanId = hex(f);
    else if (f.no === 4 && f.bytes!.length > 0) s.parentSpanId = hex(f);
    else if (f.no === 5) s.name = str(f);
    else if (f.no === 6) s.kind = Number(f.varint);
    else if (f.no === 7) s.startTimeUnixNano = fixed64(f);
    else if (f.no === 8) s.endTimeUnixNano = fixed64(f);
    else if (f.no === 11) {
      const e: Record<string, unknown> = { attributes: attributes(f.bytes!, 3) };
      for (const g of fields(f.bytes!)) if (g.no === 2) e.name = str(g);
      (s.events as unknown[]).push(e);
    } else if (f.no === 13) {
      const l: Record<string, unknown> = { attributes: attributes(f.bytes!, 4) };
      for (const g of fields(f.bytes!)) {
        if (g.no === 1) l.traceId = hex(g);
        else if (g.no === 2) l.spanId = hex(g);
      }
      (s.links as unknown[]).push(l);
    } else if (f.no === 15) {
      const st: Record<string, unknown> = {};
      for (const g of fields(f.bytes!)) {
        if (g.no === 2) st.message = str(g);
        else if (g.no === 3) st.code = Number(g.varint);
      }
      s.status = st;
    }
  }
  return s;
}

/** The `resourceSpans` of a protobuf `ExportTraceServiceRequest`, shaped as OTLP/JSON has them (for `decodeResourceSpans`). */
export function protobufResourceSpans(body: Buffer): any[] {
  return [...fields(body)]
    .filter((f) => f.no === 1)
    .map((rs) => {
      const out: { resource: { attributes: unknown[] }; scopeSpans: { spans: unknown[] }[] } = { resource: { attributes: [] }, scopeSpans: [] };
      for (const f of fields(rs.bytes!)) {
        if (f.no === 1) out.resource.attributes = attributes(f.bytes!, 1);
        else if (f.no === 2)
          out.scopeSpans.push({
            spans: [...fields(f.bytes!)].filter((g) => g.no === 2).map((g) => span(g.bytes!)),
          });
      }
      return out;
    });
}

function logRecord(buf: Buffer): Record<string, unknown> {
  const l: Record<string, unknown> = { attributes: attributes(buf, 6) };
  for (const f of fields(buf)) {
    if (f.no === 1) l.timeUnixNano = fixed64(f);
    else if (f.no === 2) l.severityNumber = Number(f.varint);
    else if (f.no === 3) l.severityText = str(f);
    else if (f.no === 5) l.body = anyValue(f.bytes!);
    else if (f.no === 8) l.flags = f.fixed!.readUInt32LE();
    else if (f.no === 9 && f.bytes!.length > 0) l.traceId = hex(f);
    else if (f.no === 10 && f.bytes!.length > 0) l.spanId = hex(f);
    else if (f.no === 12) l.eventName = str(f);
  }
  return l;
}

/** The `resourceLogs` of a protobuf `ExportLogsServiceRequest`, shaped as OTLP/JSON has them (for `decodeResourceLogs`). */
export function protobufResourceLogs(body: Buffer): any[] {
  return [...fields(body)]
    .filter((f) => f.no === 1)
    .map((rl) => {
      const out: { resource: { attributes: unknown[] }; scopeLogs: { logRecords: unknown[] }[] } = { resource: { attributes: [] }, scopeLogs: [] };
      for (const f of fields(rl.bytes!)) {
        if (f.no === 1) out.resource.attributes = attributes(f.bytes!, 1);
        else if (f.no === 2)
          out.scopeLogs.push({
            logRecords: [...fields(f.bytes!)].filter((g) => g.no === 2).map((g) => logRecord(g.bytes!)),
          });
      }
      return out;
    });
}
