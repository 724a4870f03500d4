import { open } from 'node:fs/promises';

const fault = (code: string) => Object.assign(new Error(`injected ${code}`), { code });

/**
 * A disk with a byte budget, for the log sink's `open` seam: real files, but
 * a write past the budget is cut short and the next one fails ENOSPC, the way
 * a full tmpfs behaves. `failOpen` makes every open fail with that code.
 */
export class FaultyDisk {
  /** bytes that may still be written, across every file */
  remaining = Number.POSITIVE_INFINITY;
  failOpen: string | undefined;
  /** writes to files whose path matches fail with `code`, whatever the budget */
  failWrites: { path: RegExp; code: string } | undefined;
  writes = 0;

  readonly open = (async (path: string, flags?: string, mode?: number) => {
    if (this.failOpen) throw fault(this.failOpen);
    const h = await open(path, flags, mode);
    return new Proxy(h, {
      get: (target, prop) => {
        if (prop === 'write') {
          return async (buf: Buffer, offset = 0, length = buf.length - offset, position?: number | null) => {
            this.writes++;
            if (this.failWrites?.path.test(path)) throw fault(this.failWrites.code);
            if (this.remaining <= 0) throw fault('ENOSPC');
            const n = Math.min(length, this.remaining);
            const r = await target.write(buf, offset, n, position);
            this.remaining -= r.bytesWritten;
            return r;
          };
        }
        const v: unknown = Reflect.get(target, prop);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  }) as typeof open;
}
