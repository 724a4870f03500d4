import http from 'node:http';
import { waitFor } from '../../../support/processes.js';

/** A raw SSE reader over a real socket: everything received, as text. */
export interface SseClient {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  text(): string;
  /** the `data:` lines received so far */
  data(): string[];
  ended(): boolean;
  until(what: string, pred: (text: string) => boolean, ms?: number): Promise<string>;
  close(): void;
}

export function openSse(port: number, pathAndQuery: string, headers: Record<string, string>): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: pathAndQuery, headers: { accept: 'text/event-stream', host: '127.0.0.1', ...headers } }, (res) => {
      let text = '';
      let ended = false;
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => (ended = true));
      res.on('close', () => (ended = true));
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        text: () => text,
        data: () =>
          text
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice('data: '.length)),
        ended: () => ended,
        until: (what, pred, ms = 5000) => waitFor(what, () => (pred(text) ? text : undefined), ms),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
  });
}
