import { describe, expect, it } from 'vitest';
import { SerialQueue } from '../../../src/util/serial-queue.js';

const tick = () => new Promise<void>((r) => setTimeout(r, 1));

describe('SerialQueue', () => {
  it('runs tasks one at a time, in the order they were added', async () => {
    const q = new SerialQueue();
    const order: number[] = [];
    let running = 0;
    let most = 0;
    for (let i = 0; i < 20; i++) {
      q.add(async () => {
        most = Math.max(most, ++running);
        if (i % 3 === 0) await tick();
        order.push(i);
        running--;
      });
    }
    await q.onIdle();
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(most).toBe(1);
    expect(q.pending).toBe(0);
  });

  it('onIdle waits for tasks added while it waits, and resolves at once when idle', async () => {
    const q = new SerialQueue();
    const done: string[] = [];
    q.add(async () => {
      await tick();
      done.push('a');
      // added by a running task, after onIdle was asked for
      q.add(async () => {
        await tick();
        done.push('b');
      });
    });
    const idle = q.onIdle();
    q.add(async () => void done.push('c'));
    await idle;
    expect(done).toEqual(['a', 'c', 'b']);
    await q.onIdle();
  });

  it('refuses past maxTasks or maxBytes (one task is always taken, whatever its size), and takes tasks again once they ran', async () => {
    const q = new SerialQueue({ maxTasks: 2, maxBytes: 100 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    expect(q.add(() => gate, 500)).toBe(true); // over the byte bound, but the queue was empty
    expect(q.add(async () => undefined, 1)).toBe(false); // bytes
    const q2 = new SerialQueue({ maxTasks: 2 });
    expect(q2.add(() => gate)).toBe(true);
    expect(q2.add(() => gate)).toBe(true);
    expect(q2.add(() => gate)).toBe(false); // tasks
    expect(q2.pending).toBe(2);
    release();
    await Promise.all([q.onIdle(), q2.onIdle()]);
    expect(q.add(async () => undefined, 100)).toBe(true);
    expect(q2.add(async () => undefined)).toBe(true);
  });

  it('a task that throws or rejects is reported, and the next ones still run', async () => {
    const errors: unknown[] = [];
    const q = new SerialQueue({ onError: (e) => errors.push(e) });
    const ran: number[] = [];
    q.add(() => {
      throw new Error('sync');
    });
    q.add(async () => {
      await tick();
      throw new Error('async');
    });
    q.add(async () => void ran.push(3));
    await q.onIdle();
    expect(errors.map((e) => (e as Error).message)).toEqual(['sync', 'async']);
    expect(ran).toEqual([3]);
    expect(q.pending).toBe(0);
  });
});
