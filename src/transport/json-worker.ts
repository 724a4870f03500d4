// The worker thread behind JsonBodyParser: assembles each large body from its
// pieces, scans and parses it off the daemon's thread, and posts back the
// value or the refusal. Error messages never travel: JSON.parse's quote the
// body, which is content.
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { BodyRefusal, knownDepth, PART_BYTES, parseBounded, type WorkerReply, type WorkerRequest } from './json-body.js';
import { splitValue, type Part } from './json-parts.js';

// Parsing is background work: on Linux a nice value belongs to the calling thread, so
// this lowers the worker only, and the daemon's own thread keeps the CPU when both want it.
if (process.platform === 'linux') {
  try {
    setPriority(10);
  } catch {
    /* not permitted: parse at the normal priority */
  }
}

const bodies = new Map<number, Uint8Array[]>();
/** values going back in batches, one batch per request of the daemon */
const outgoing = new Map<number, { batches: Part[][]; depth: number | undefined }>();

function sendBatch(id: number): void {
  const out = outgoing.get(id);
  const batch = out?.batches.shift();
  if (!out || !batch) return void outgoing.delete(id);
  const more = out.batches.length > 0;
  if (!more) outgoing.delete(id);
  parentPort!.postMessage({ id, ok: true, parts: batch, more, ...(!more && out.depth !== undefined ? { depth: out.depth } : {}) } satisfies WorkerReply);
}

parentPort?.on('message', (m: WorkerRequest) => {
  if (m.type === 'next') return sendBatch(m.id);
  if (m.type === 'chunk') {
    let parts = bodies.get(m.id);
    if (!parts) bodies.set(m.id, (parts = []));
    parts.push(m.bytes);
    return;
  }
  const parts = bodies.get(m.id) ?? [];
  bodies.delete(m.id);
  if (m.type === 'abort') return void outgoing.delete(m.id);
  try {
    const body = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    parts.length = 0;
    const value = parseBounded(body, m.limits);
    outgoing.set(m.id, { batches: splitValue(value, PART_BYTES), depth: knownDepth(value) });
    return sendBatch(m.id);
  } catch (err) {
    const reply: WorkerReply = err instanceof BodyRefusal ? { id: m.id, ok: false, refusal: err.code } : { id: m.id, ok: false, syntax: true };
    parentPort!.postMessage(reply);
  }
});
