import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendPrivate, ensurePrivateDir, truncatePrivateSync } from '../../../src/util/private-path.js';
import { replaceDurably } from '../../../src/util/durable-file.js';
import { ensureHookToken, HookTokenError } from '../../../src/transport/hook-token.js';
import { tempDir } from '../../support/processes.js';

/** a uid that is not this process's (the tests run as root, which may chown to it) */
const OTHER_UID = 65534;

function world() {
  const dir = tempDir();
  const victim = path.join(tempDir(), 'victim.txt');
  writeFileSync(victim, 'precious\n', { mode: 0o600 });
  return { dir, victim };
}

describe('private files: never through a symlink, never one of another user', () => {
  it('appendPrivate refuses a planted symlink (ELOOP) and a file of another user; creates 0600 otherwise', async () => {
    const w = world();
    const link = path.join(w.dir, 'out.files');
    symlinkSync(w.victim, link);
    await expect(appendPrivate(link, '.')).rejects.toMatchObject({ code: 'ELOOP' });
    const theirs = path.join(w.dir, 'theirs');
    writeFileSync(theirs, '');
    chownSync(theirs, OTHER_UID, OTHER_UID);
    await expect(appendPrivate(theirs, '.')).rejects.toThrow(`owned by uid ${OTHER_UID}`);
    const mine = path.join(w.dir, 'mine');
    await appendPrivate(mine, 'a');
    await appendPrivate(mine, 'b');
    expect(readFileSync(mine, 'utf8')).toBe('ab');
    expect(lstatSync(mine).mode & 0o777).toBe(0o600);
    expect(readFileSync(w.victim, 'utf8')).toBe('precious\n');
    expect(readFileSync(theirs, 'utf8')).toBe('');
  });

  it('truncatePrivateSync (the spool ledger reset) never empties a symlink target or a 0666 file', () => {
    const w = world();
    const link = path.join(w.dir, 'in.kib');
    symlinkSync(w.victim, link);
    expect(() => truncatePrivateSync(link)).toThrow(expect.objectContaining({ code: 'ELOOP' }) as Error);
    const loose = path.join(w.dir, 'out.kib');
    writeFileSync(loose, '....');
    chmodSync(loose, 0o666);
    expect(() => truncatePrivateSync(loose)).toThrow('writable by every user');
    expect(readFileSync(w.victim, 'utf8')).toBe('precious\n');
    expect(readFileSync(loose, 'utf8')).toBe('....');
  });

  it('replaceDurably replaces a planted symlink itself (the snapshot, the epoch), never its target', async () => {
    const w = world();
    const file = path.join(w.dir, 'snapshot');
    symlinkSync(w.victim, file);
    await replaceDurably(file, (fh) => fh.writeFile('new\n'));
    expect(lstatSync(file).isSymbolicLink()).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('new\n');
    expect(readFileSync(w.victim, 'utf8')).toBe('precious\n');
    expect(readdirSync(w.dir)).toEqual(['snapshot']);
  });

  it('ensurePrivateDir names the directory and the fix', async () => {
    const w = world();
    const loose = path.join(w.dir, 'loose');
    mkdirSync(loose);
    chmodSync(loose, 0o777);
    await expect(ensurePrivateDir(loose)).rejects.toThrow(`${loose} is writable by every user (mode 0777); chmod 700 ${loose}`);
    const theirs = path.join(w.dir, 'theirs');
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, OTHER_UID, OTHER_UID);
    await expect(ensurePrivateDir(theirs)).rejects.toThrow(`${theirs} is owned by uid ${OTHER_UID}, not by this user`);
  });

  it('a hook token file another user owns (they know the token) is refused, not trusted', async () => {
    const w = world();
    const token = path.join(w.dir, 'hook-token');
    writeFileSync(token, 'a'.repeat(64), { mode: 0o600 });
    chownSync(token, OTHER_UID, OTHER_UID);
    await expect(ensureHookToken(token)).rejects.toThrow(HookTokenError);
    await expect(ensureHookToken(token)).rejects.toThrow(`owned by uid ${OTHER_UID}`);
  });
});
