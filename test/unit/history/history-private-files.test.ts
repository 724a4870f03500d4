import { chmodSync, chownSync, linkSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonlHistorySink } from '../../../src/history/jsonl-history-sink.js';
import { tempDir } from '../../support/processes.js';
import { recordingLog } from './recording-log.js';
import { eventMaker } from './sink-events.js';

/** a uid that is not this process's (the tests run as root, which may chown to it) */
const OTHER_UID = 65534;

const ev = eventMaker('p');

/** a log dir whose `hermes/` exists (0700), and a victim file outside it */
function world() {
  const base = tempDir();
  const root = path.join(base, 'log');
  const hermes = path.join(root, 'hermes');
  mkdirSync(hermes, { recursive: true, mode: 0o700 });
  const victim = path.join(base, 'victim.txt');
  writeFileSync(victim, 'precious\n', { mode: 0o600 });
  return { base, root, hermes, victim };
}

describe('JSONL history sink: only private files of this user are written', () => {
  it('a session file planted as a symlink is never followed: the target is untouched, the session refused (counted), others written', async () => {
    const w = world();
    symlinkSync(w.victim, path.join(w.hermes, 'S1.jsonl'));
    const { log, lines } = recordingLog();
    const sink = new JsonlHistorySink(w.root, 1000, { log });
    const refused = await sink.write([ev('S1')]);
    const fine = await sink.write([ev('S2')]);
    expect(readFileSync(w.victim, 'utf8')).toBe('precious\n');
    expect(refused).toMatchObject({ written: 0, lost: 1 });
    expect(fine).toMatchObject({ written: 1, lost: 0 });
    expect(readFileSync(path.join(w.hermes, 'S2.jsonl'), 'utf8')).toContain('"session":"S2"');
    // one session refused does not make the whole log degraded
    expect(sink.health()).toBeUndefined();
    expect(sink.stats()).toMatchObject({ refused_files: 1, dropped: 1, written: 1 });
    expect(lines.filter((l) => l.msg.includes('session log was refused'))).toHaveLength(1);
    await sink.shutdown();
  });

  it.each([
    ['owned by another user', (f: string) => chownSync(f, OTHER_UID, OTHER_UID)],
    ['writable by every user (0666)', (f: string) => chmodSync(f, 0o666)],
    ['writable by its group (0620)', (f: string) => chmodSync(f, 0o620)],
    ['hard-linked (two names)', (f: string) => linkSync(f, `${f}.other-name`)],
  ])('an existing session file %s is refused, never appended to', async (_what, spoil) => {
    const w = world();
    const file = path.join(w.hermes, 'S1.jsonl');
    writeFileSync(file, 'planted\n', { mode: 0o600 });
    spoil(file);
    const sink = new JsonlHistorySink(w.root, 1000);
    expect(await sink.write([ev('S1')])).toMatchObject({ written: 0, lost: 1 });
    expect(await sink.write([ev('S1')])).toMatchObject({ written: 0, lost: 1 });
    expect(readFileSync(file, 'utf8')).toBe('planted\n');
    expect(sink.stats()).toMatchObject({ refused_files: 2, dropped: 2 });
    expect(sink.health()).toBeUndefined();
    await sink.shutdown();
  });

  it('a file the daemon made itself is 0600 and taken on the next open', async () => {
    const w = world();
    const first = new JsonlHistorySink(w.root, 1000);
    await first.write([ev('S1')]);
    await first.shutdown();
    expect(statSync(path.join(w.hermes, 'S1.jsonl')).mode & 0o777).toBe(0o600);
    const second = new JsonlHistorySink(w.root, 1000);
    expect(await second.write([ev('S1')])).toMatchObject({ written: 1 });
    expect(second.stats()).toMatchObject({ refused_files: 0 });
    await second.shutdown();
  });

  it("a foreign agent's directory owned by another user, or a symlink to one, is refused", async () => {
    const w = world();
    const ingest = path.join(w.root, 'ingest');
    mkdirSync(path.join(ingest, 'theirs'), { recursive: true, mode: 0o700 });
    chownSync(path.join(ingest, 'theirs'), OTHER_UID, OTHER_UID);
    const elsewhere = path.join(w.base, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o700 });
    symlinkSync(elsewhere, path.join(ingest, 'linked'));
    const sink = new JsonlHistorySink(w.root, 1000, { subdir: 'ingest', nested: true });
    const lines = (agent: string) => new Map([[path.join(ingest, agent, 'S1.jsonl'), ['{"x":1}\n']]]);
    expect(await sink.writeLines(lines('theirs'))).toMatchObject({ written: 0, lost: 1 });
    expect(await sink.writeLines(lines('linked'))).toMatchObject({ written: 0, lost: 1 });
    expect(await sink.writeLines(lines('ours'))).toMatchObject({ written: 1, lost: 0 });
    expect(readdirSync(path.join(ingest, 'theirs'))).toEqual([]);
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(statSync(path.join(ingest, 'ours')).mode & 0o777).toBe(0o700);
    expect(sink.stats()).toMatchObject({ refused_files: 2 });
    await sink.shutdown();
  });

  it('the start-up write probe never follows a planted probe name', async () => {
    const w = world();
    symlinkSync(w.victim, path.join(w.hermes, `.write-probe.${process.pid}`));
    const sink = new JsonlHistorySink(w.root, 1000);
    await sink.start();
    expect(readFileSync(w.victim, 'utf8')).toBe('precious\n');
    expect(sink.health()).toBeUndefined();
    await sink.shutdown();
  });
});
