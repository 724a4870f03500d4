import { request, type IncomingMessage } from 'node:http';
import WebSocket from 'ws';

/** One SSE message as received: its fields and its `data:` text exactly. */
export interface SseMessage {
  readonly event?: string;
  readonly id?: string;
  readonly data: string;
}

/**
 * A test consumer of `GET /stream` (AEP-0003 §3.3) over TCP or the Unix
 * socket: it keeps every message and comment line in arrival order, and
 * knows when the server ended the stream.
 */
export class SseConsumer {
  readonly messages: SseMessage[] = [];
  readonly comments: string[] = [];
  status = 0;
  ended = false;
  private res: IncomingMessage | undefined;
  private readonly done: Promise<void>;

  constructor(to: { url: string } | { socketPath: string }, opts: { path?: string; token?: string; lastEventId?: string } = {}) {
    const pathAndQuery = opts.path ?? '/stream';
    const headers: Record<string, string> = { accept: 'text/event-stream', host: 'localhost' };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.lastEventId) headers['last-event-id'] = opts.lastEventId;
    const target =
      'url' in to
        ? (() => {
            const u = new URL(pathAndQuery, to.url);
            return { host: u.hostname, port: u.port, path: `${u.pathname}${u.search}` };
          })()
        : { socketPath: to.socketPath, path: pathAndQuery };
    this.done = new Promise((resolve) => {
      const req = request({ ...target, headers, agent: false }, (res) => {
        this.res = res;
        this.status = res.statusCode ?? 0;
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let i: number;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            this.take(buf.slice(0, i));
            buf = buf.slice(i + 2);
          }
        });
        const end = () => {
          this.ended = true;
          resolve();
        };
        res.on('end', end);
        res.on('close', end);
        res.on('error', end);
      });
      req.on('error', () => {
        this.ended = true;
        resolve();
      });
      req.end();
    });
  }

  private take(block: string): void {
    let event: string | undefined;
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
      else if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('id:')) id = line.slice(3).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) this.messages.push({ ...(event !== undefined ? { event } : {}), ...(id !== undefined ? { id } : {}), data: data.join('\n') });
  }

  /** the `data:` lines, in order */
  lines(): string[] {
    return this.messages.map((m) => m.data);
  }

  close(): Promise<void> {
    this.res?.destroy();
    return this.done;
  }

  closed(): Promise<void> {
    return this.done;
  }
}

/** A test consumer of `/socket` (AEP-0003 §3.5, §4): hello first, then subscriptions; every frame kept as text. */
export class WsConsumer {
  readonly frames: string[] = [];
  closed = false;
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      if (!isBinary)
        this.frames.push(Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]).toString('utf8'));
    });
    ws.on('close', () => (this.closed = true));
  }

  static async open(url: string, token?: string, role: 'consumer' | 'emitter' | 'both' = 'consumer', agent = 'test-consumer'): Promise<WsConsumer> {
    const ws = new WebSocket(url, { headers: { host: 'localhost', ...(token ? { authorization: `Bearer ${token}` } : {}) } });
    const c = new WsConsumer(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    c.send({ type: 'hello', versions: ['0.1'], role, identity: { agent, instance: 'test/1' }, capabilities: {} });
    return c;
  }

  send(frame: unknown): void {
    this.ws.send(JSON.stringify(frame));
  }

  sendText(text: string): void {
    this.ws.send(text);
  }

  /** parsed frames (each text frame is one JSON object) */
  parsed(): Record<string, unknown>[] {
    return this.frames.map((f) => JSON.parse(f) as Record<string, unknown>);
  }

  /** the Event frames (a `type` with a dot), as received */
  eventLines(): string[] {
    return this.frames.filter((f) => {
      const type = (JSON.parse(f) as { type?: unknown }).type;
      return typeof type === 'string' && type.includes('.');
    });
  }

  close(): void {
    this.ws.close();
  }
}
