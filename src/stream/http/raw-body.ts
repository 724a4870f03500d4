import { httpRefusal, type HttpRefusal } from '../../core/errors.js';

/** A refusal raised while reading a body: the plugin's error handler answers it as is. */
export class StreamHttpError extends Error {
  constructor(readonly refusal: HttpRefusal) {
    super(refusal.body.error);
    this.name = 'StreamHttpError';
  }
}

export const MEDIA_TYPES = ['application/json', 'application/x-ndjson'] as const;
export type IngestMediaType = (typeof MEDIA_TYPES)[number];

/** The media type of a Content-Type header (parameters dropped, lower-cased), when it is one ingest takes. */
export function ingestMediaType(header: string | undefined): IngestMediaType | undefined {
  const t = (header ?? '').split(';')[0]!.trim().toLowerCase();
  return (MEDIA_TYPES as readonly string[]).includes(t) ? (t as IngestMediaType) : undefined;
}

/** The whole body as bytes, refused with 413 past `maxBytes` (declared or received) without buffering more. */
export function readRawBody(payload: NodeJS.ReadableStream, maxBytes: number, contentLength: string | undefined): Promise<Buffer> {
  const tooLarge = () => new StreamHttpError(httpRefusal('too-large'));
  const declared = contentLength === undefined ? NaN : Number(contentLength);
  if (declared > maxBytes) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const detach = () => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onError);
    };
    const onData = (chunk: Buffer | string) => {
      const c = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      received += c.length;
      if (received > maxBytes) {
        detach();
        payload.resume();
        return reject(tooLarge());
      }
      chunks.push(c);
    };
    const onEnd = () => {
      detach();
      if (!Number.isNaN(declared) && declared !== received) return reject(new StreamHttpError(httpRefusal('bad-content-length')));
      resolve(Buffer.concat(chunks, received));
    };
    const onError = () => {
      detach();
      reject(new StreamHttpError(httpRefusal('bad-body')));
    };
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onError);
    payload.resume();
  });
}
