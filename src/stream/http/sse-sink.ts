import type { ServerResponse } from 'node:http';
import type { SubscriberSink } from '../hub-types.js';
import type { WireEvent } from '../wire.js';

/** SSE field values end at a line break, and a NUL makes browsers drop an id: such a session id gets no `id:` line. */
const FIELD_SAFE = /^[^\r\n\0]*$/;

/** `{session}:{epoch}:{seq}` for a session-scoped, sequenced event (AEP-0003 §3.3 rule 2); none otherwise. */
export function sseId(w: WireEvent): string | undefined {
  if (w.session === undefined || w.seq === undefined || !FIELD_SAFE.test(w.session)) return undefined;
  return `${w.session}:${w.epoch}:${w.seq}`;
}

/** One SSE message: `event:` the type, `id:` the position, `data:` the event line (never holding a line break). */
export function sseMessage(w: WireEvent, line: string): string {
  const id = sseId(w);
  return `event: ${w.type}\n${id !== undefined ? `id: ${id}\n` : ''}data: ${line}\n\n`;
}

/**
 * The hub's view of one SSE response: it writes messages and comments, and
 * says how much the socket still holds (the backpressure measure). `end`
 * runs once, when the hub gives up on it or replay-only delivery is done.
 */
export function sseSink(res: ServerResponse, o: { readonly start: () => void; readonly end: () => void; readonly live: boolean }): SubscriberSink {
  const write = (s: string) => {
    o.start();
    if (!res.writableEnded) res.write(s);
  };
  return {
    deliver: (w, line) => write(sseMessage(w, line)),
    exhausted: (session, earliest) => write(`: replay-exhausted ${FIELD_SAFE.test(session) ? session : encodeURIComponent(session)} ${earliest.epoch}:${earliest.seq}\n\n`),
    replayed: () => {
      o.start();
      if (!o.live) o.end();
    },
    kick: (reason) => {
      write(`: closing ${reason.replace(/[\r\n]/g, ' ')}\n\n`);
      o.end();
    },
    pending: () => res.writableLength,
    drained: () =>
      new Promise<void>((resolve) => {
        if (res.writableLength === 0 || res.destroyed) return resolve();
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      }),
  };
}
