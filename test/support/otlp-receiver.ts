import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { decodeResourceLogs, decodeResourceSpans, type DecodedLog, type DecodedSpan } from './otlp-json.js';
import { protobufResourceLogs, protobufResourceSpans } from './otlp-protobuf.js';

/** One span as it arrived over OTLP/HTTP (JSON or protobuf), attributes decoded to plain values. */
export type ReceivedSpan = DecodedSpan;

/** A real OTLP/HTTP traces (`/v1/traces`) and logs (`/v1/logs`) receiver on loopback, for tests: JSON and protobuf bodies decoded alike; every body also kept as bytes. */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** LogRecords received on /v1/logs (their bodies are in `bodies` too) */
  readonly logs: DecodedLog[] = [];
  /** every /v1/logs request body (decompressed), kept apart from the traces' `bodies` */
  readonly logBodies: Buffer[] = [];
  /** the content-type of every accepted /v1/logs request */
  readonly logContentTypes: string[] = [];
  /** answer this many /v1/logs requests 503 (`failNext` is for /v1/traces) */
  failNextLogs = 0;
  /** every request body as received, for byte-level content checks */
  readonly bodies: Buffer[] = [];
  /** the content-type of every accepted request */
  readonly contentTypes: string[] = [];
  requests = 0;
  failNext = 0;
  private server: Server | undefined;
  url = '';

  /** Listen on loopback: a free port, or `port` (a collector coming back where it was). */
  async start(port = 0): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests++;
        const signal = req.url === '/v1/traces' ? 'traces' : req.url === '/v1/logs' ? 'logs' : undefined;
        if (!signal) return void res.writeHead(404).end();
        if (signal === 'traces' ? this.failNext > 0 : this.failNextLogs > 0) {
          if (signal === 'traces') this.failNext--;
          else this.failNextLogs--;
          return void res.writeHead(503).end();
        }
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        const type = req.headers['content-type'] ?? '';
        (signal === 'traces' ? this.bodies : this.logBodies).push(body);
        (signal === 'traces' ? this.contentTypes : this.logContentTypes).push(type);
        if (type.startsWith('application/x-protobuf')) {
          if (signal === 'logs') this.logs.push(...decodeResourceLogs(protobufResourceLogs(body)));
          else this.spans.push(...decodeResourceSpans(protobufResourceSpans(body)));
          return void res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        }
        const doc = JSON.parse(body.toString('utf8')) as { resourceSpans?: any[]; resourceLogs?: any[] };
        if (signal === 'logs') this.logs.push(...decodeResourceLogs(doc.resourceLogs));
        else this.spans.push(...decodeResourceSpans(doc.resourceSpans));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => this.server!.listen(port, '127.0.0.1', r));
    const addr = this.server.address();
    this.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((r) => this.server!.close(r));
  }
}
