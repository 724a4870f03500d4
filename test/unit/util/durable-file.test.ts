import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { tempDir } from '../../support/processes.js';

/** Every directory fsync, with what the target file held at that moment (the rename must come first). */
const dirSyncs: { dir: string; content: string }[] = [];
let watched: string | undefined;

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const open = async (...args: Parameters<typeof real.open>) => {
    const fh = await real.open(...args);
    const p = String(args[0]);
    if (watched && p === path.dirname(watched)) {
      const sync = fh.sync.bind(fh);
      fh.sync = async () => {
        dirSyncs.push({ dir: p, content: readFileSync(watched!, 'utf8') });
        return sync();
      };
    }
    return fh;
  };
  return { ...real, open, default: { ...real, open } };
});

const { replaceDurably } = await import('../../../src/util/durable-file.js');

describe('replaceDurably', () => {
  it('replaces the file whole (0600), fsyncs the directory AFTER the rename, and leaves no temp file', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'epoch');
    writeFileSync(file, 'old\n');
    watched = file;
    dirSyncs.length = 0;
    const r = await replaceDurably(file, async (fh) => {
      await fh.write(Buffer.from('tail'), 0, 4, 4);
      await fh.write(Buffer.from('new\n'), 0, 4, 0);
      return 42;
    });
    expect(r).toBe(42);
    expect(readFileSync(file, 'utf8')).toBe('new\ntail');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['epoch']);
    expect(dirSyncs).toEqual([{ dir, content: 'new\ntail' }]);
    watched = undefined;
  });

  it('a writer that fails (a full disk) keeps the old file and leaves no temp file', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'ended-sessions');
    writeFileSync(file, 'old\n');
    const enospc = Object.assign(new Error('injected'), { code: 'ENOSPC' });
    await expect(
      replaceDurably(file, async (fh) => {
        await fh.writeFile('half');
        throw enospc;
      }),
    ).rejects.toBe(enospc);
    expect(readFileSync(file, 'utf8')).toBe('old\n');
    expect(readdirSync(dir)).toEqual(['ended-sessions']);
  });

  it('concurrent replacements of one file are serialized: the file is always one whole version', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'snapshot');
    const versions = Array.from({ length: 8 }, (_, i) => `v${i}:${String(i).repeat(10_000)}`);
    await Promise.all(
      versions.map((v) =>
        replaceDurably(file, async (fh) => {
          for (let at = 0; at < v.length; at += 1000) await fh.write(Buffer.from(v.slice(at, at + 1000)), 0, Math.min(1000, v.length - at), at);
        }),
      ),
    );
    expect(versions).toContain(readFileSync(file, 'utf8'));
    expect(readdirSync(dir)).toEqual(['snapshot']);
  });
});
