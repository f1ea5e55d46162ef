/**
 * A real OTLP/HTTP trace receiver for the tests: a Bun.serve on port 0 taking `POST /v1/traces`
 * in both encodings the exporter speaks, `application/x-protobuf` (decoded here from the
 * protobuf wire format by the field numbers of opentelemetry/proto/trace/v1/trace.proto and
 * collector/trace/v1/trace_service.proto) and `application/json` (OTLP's JSON mapping), into
 * one plain shape.
 */

export type AttributeValue = string | number | boolean | null;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, AttributeValue>;
  links: Array<{ traceId: string; spanId: string }>;
  /** The resource attributes of the batch it came in. */
  resource: Record<string, AttributeValue>;
}

export interface OtlpReceiver {
  /** http://127.0.0.1:<port> (OTEL_EXPORTER_OTLP_ENDPOINT: the exporter appends /v1/traces). */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** The Content-Type of every export request received. */
  readonly contentTypes: string[];
  stop(): Promise<void>;
}

type Field = { no: number; wire: number; value: bigint | Uint8Array };

/** One message's fields, in order (varints as bigint, length-delimited as bytes; fixed widths as bigint). */
function fields(bytes: Uint8Array): Field[] {
  const out: Field[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = bytes[at++];
      if (byte === undefined) throw new Error("truncated varint");
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (at < bytes.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, value: varint() });
    else if (wire === 1) {
      out.push({ no, wire, value: view.getBigUint64(at, true) });
      at += 8;
    } else if (wire === 2) {
      const length = Number(varint());
      out.push({ no, wire, value: bytes.subarray(at, at + length) });
      at += length;
    } else if (wire === 5) {
      out.push({ no, wire, value: BigInt(view.getUint32(at, true)) });
      at += 4;
    } else throw new Error(`unexpected wire type ${wire}`);
  }
  return out;
}

const text = (value: bigint | Uint8Array) => new TextDecoder().decode(value as Uint8Array);
const hex = (value: bigint | Uint8Array) => Buffer.from(value as Uint8Array).toString("hex");

/** AnyValue: 1 string, 2 bool, 3 int, 4 double, 5 array, 6 kvlist, 7 bytes. */
function protoValue(bytes: Uint8Array): AttributeValue {
  for (const f of fields(bytes)) {
    if (f.no === 1) return text(f.value);
    if (f.no === 2) return f.value === 1n;
    if (f.no === 3) return Number(BigInt.asIntN(64, f.value as bigint));
    if (f.no === 4) {
      const buffer = new DataView(new ArrayBuffer(8));
      buffer.setBigUint64(0, f.value as bigint, true);
      return buffer.getFloat64(0, true);
    }
    return hex(f.value);
  }
  return null;
}

/** repeated KeyValue (1 key, 2 value). */
function protoAttributes(list: Field[], no: number): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  for (const f of list) {
    if (f.no !== no) continue;
    let key = "";
    let value: AttributeValue = null;
    for (const kv of fields(f.value as Uint8Array)) {
      if (kv.no === 1) key = text(kv.value);
      if (kv.no === 2) value = protoValue(kv.value as Uint8Array);
    }
    attributes[key] = value;
  }
  return attributes;
}

/** ExportTraceServiceRequest: 1 ResourceSpans { 1 Resource { 1 attributes }, 2 ScopeSpans { 2 Span } }. */
function decodeProtobuf(body: Uint8Array): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of fields(body).filter((f) => f.no === 1)) {
    const rsFields = fields(rs.value as Uint8Array);
    const resourceField = rsFields.find((f) => f.no === 1);
    const resource = resourceField ? protoAttributes(fields(resourceField.value as Uint8Array), 1) : {};
    for (const ss of rsFields.filter((f) => f.no === 2)) {
      for (const s of fields(ss.value as Uint8Array).filter((f) => f.no === 2)) {
        const sf = fields(s.value as Uint8Array);
        const one = (no: number) => sf.find((f) => f.no === no)?.value;
        const bytesOf = (no: number) => {
          const v = one(no);
          return v === undefined ? "" : hex(v);
        };
        spans.push({
          traceId: bytesOf(1),
          spanId: bytesOf(2),
          parentSpanId: bytesOf(4),
          name: one(5) === undefined ? "" : text(one(5) as Uint8Array),
          kind: Number(one(6) ?? 0n),
          attributes: protoAttributes(sf, 9),
          links: sf
            .filter((f) => f.no === 13)
            .map((l) => {
              const lf = fields(l.value as Uint8Array);
              return {
                traceId: hex(lf.find((f) => f.no === 1)?.value ?? new Uint8Array()),
                spanId: hex(lf.find((f) => f.no === 2)?.value ?? new Uint8Array()),
              };
            }),
          resource,
        });
      }
    }
  }
  return spans;
}

interface JsonKeyValue {
  key: string;
  value: Record<string, unknown>;
}

function jsonValue(value: Record<string, unknown>): AttributeValue {
  if ("stringValue" in value) return String(value.stringValue);
  if ("boolValue" in value) return Boolean(value.boolValue);
  if ("intValue" in value) return Number(value.intValue);
  if ("doubleValue" in value) return Number(value.doubleValue);
  return JSON.stringify(value);
}

function jsonAttributes(list: JsonKeyValue[] | undefined): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  for (const kv of list ?? []) attributes[kv.key] = jsonValue(kv.value);
  return attributes;
}

/** OTLP JSON: ids are hex strings, enums numbers. */
function decodeJson(body: string): ReceivedSpan[] {
  const request = JSON.parse(body) as {
    resourceSpans?: Array<{
      resource?: { attributes?: JsonKeyValue[] };
      scopeSpans?: Array<{
        spans?: Array<{
          traceId: string;
          spanId: string;
          parentSpanId?: string;
          name: string;
          kind?: number;
          attributes?: JsonKeyValue[];
          links?: Array<{ traceId: string; spanId: string }>;
        }>;
      }>;
    }>;
  };
  const spans: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? "",
          name: s.name,
          kind: s.kind ?? 0,
          attributes: jsonAttributes(s.attributes),
          links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
          resource,
        });
      }
    }
  }
  return spans;
}

export function startOtlpReceiver(): OtlpReceiver {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url);
      if (request.method !== "POST" || url.pathname !== "/v1/traces") return new Response("no", { status: 404 });
      const type = request.headers.get("content-type") ?? "";
      contentTypes.push(type);
      if (type.startsWith("application/x-protobuf")) {
        spans.push(...decodeProtobuf(new Uint8Array(await request.arrayBuffer())));
        // An empty ExportTraceServiceResponse: full success.
        return new Response(new Uint8Array(), { headers: { "content-type": "application/x-protobuf" } });
      }
      spans.push(...decodeJson(await request.text()));
      return Response.json({});
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    spans,
    contentTypes,
    stop: () => server.stop(true),
  };
}
