import { describe, expect, it } from 'vitest';
import { appendFileSync, cpSync, readdirSync, readFileSync, renameSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { tempDir } from '../../support/processes.js';
import { soakSchedule } from '../../support/soak-history.js';
import { laneText } from '../../../src/identity/lane-state.js';
import { openWorld, type World } from '../../support/snapshot-world.js';

/**
 * Whatever is wrong with a snapshot, the start falls back to the full replay
 * (never a crash, never a wrong state), and a snapshot that is right but
 * partly stale (new logs, logs out of the window, a torn tail) is completed
 * from the logs exactly as a replay would have.
 */
const N = 40;

async function written(opts: { mirror?: boolean } = {}) {
  const now = Date.now();
  const h = soakSchedule(N, now, 20 * 60_000, 60_000, 150);
  const root = tempDir();
  let clock = now - 20 * 60_000;
  const a = await openWorld({ root, epoch: 0, idPrefix: 'A', now: () => clock, ...opts });
  for (const { t, s, k } of h.timeline) {
    clock = t;
    a.feed([h.sessions[s]!.hooks[k]!], () => t);
  }
  await a.close();
  return { root, h, logs: path.join(root, 'log', 'hermes'), snap: path.join(root, 'state', 'snapshot'), clock: () => clock };
}

/** The state a world holds, in an order-free form. */
function view(w: World): string {
  const lanes = w.identity
    .saveLanes()
    .map((l) => {
      const x = JSON.parse(laneText(l)) as Record<string, unknown>;
      delete x.lastSeen;
      x.approvals = (x.approvals as unknown[][]).map((c) => [c[0], c[1], c[2], c[4]]);
      return JSON.stringify(x);
    })
    .sort();
  const m = w.mirror?.saveState();
  const units = m ? m.units.map((u) => JSON.stringify({ ...u, ctx: `${m.ctx[0][u.ctx]}/${m.ctx[1][u.ctx]}` })).sort() : [];
  return JSON.stringify({ lanes, units, closed: m ? [...m.closed].sort() : [] });
}

/** A full replay of a copy of the same dirs (no snapshot there). */
async function replayOf(root: string, clock: number): Promise<World> {
  const copy = tempDir();
  cpSync(root, copy, { recursive: true, preserveTimestamps: true });
  writeFileSync(path.join(copy, 'state', 'snapshot'), 'gone');
  const w = await openWorld({ root: copy, epoch: 9, idPrefix: 'R', now: () => clock });
  expect(w.restored.from).toBe('replay');
  return w;
}

const open = (root: string, clock: number, opts: { mirror?: boolean } = {}) => openWorld({ root, epoch: 1, idPrefix: 'B', now: () => clock, ...opts });

describe('snapshot fallbacks', () => {
  it('a sound snapshot is used, and rebuilds what a replay does', async () => {
    const w = await written();
    const b = await open(w.root, w.clock());
    expect(b.restored).toMatchObject({ from: 'snapshot', lanes: N });
    expect(b.restored.replay.events).toBe(0);
    expect(view(b)).toBe(view(await replayOf(w.root, w.clock())));
  });

  const corruptions: [string, (w: Awaited<ReturnType<typeof written>>) => void, RegExp][] = [
    [
      'a flipped byte in the body',
      (w) => {
        const b = readFileSync(w.snap);
        b[b.length - 10] = b[b.length - 10]! ^ 0x20;
        writeFileSync(w.snap, b);
      },
      /checksum/,
    ],
    ['a truncated file', (w) => truncateSync(w.snap, statSync(w.snap).size - 100), /truncated/],
    ['garbage', (w) => writeFileSync(w.snap, 'not a snapshot at all\n{}'), /header is not JSON/],
    ['an empty file', (w) => writeFileSync(w.snap, ''), /no header/],
    ['a JSON header of something else', (w) => writeFileSync(w.snap, '{"hello":1}\n'), /not a snapshot/],
    ['another format version', (w) => rewriteHeader(w.snap, (h) => ({ ...h, version: 99 })), /format version 99/],
    ['another daemon version', (w) => rewriteHeader(w.snap, (h) => ({ ...h, daemon: '0.0.1' })), /daemon 0\.0\.1/],
    ['another log dir', (w) => rewriteHeader(w.snap, (h) => ({ ...h, log_dir: '/elsewhere' })), /another log dir/],
    ['other mirror settings', (w) => rewriteHeader(w.snap, (h) => ({ ...h, mirror: 'capture=full' })), /other mirror settings/],
    [
      'a log shorter than its offset',
      (w) => {
        const f = path.join(w.logs, readdirSync(w.logs)[0]!);
        truncateSync(f, statSync(f).size - 1);
      },
      /shorter/,
    ],
    [
      'a log replaced by another file',
      (w) => {
        const f = path.join(w.logs, readdirSync(w.logs)[0]!);
        writeFileSync(`${f}.new`, readFileSync(f));
        renameSync(`${f}.new`, f);
      },
      /replaced/,
    ],
    [
      'a log rewritten in place so the offset is mid-line',
      (w) => {
        const f = path.join(w.logs, readdirSync(w.logs)[0]!);
        const size = statSync(f).size;
        truncateSync(f, size - 5);
        appendFileSync(f, 'xxxxxxxxxx\n');
      },
      /does not break/,
    ],
  ];
  for (const [what, corrupt, reason] of corruptions) {
    it(`${what}: full replay instead, same state, no crash`, async () => {
      const w = await written();
      corrupt(w);
      const b = await open(w.root, w.clock());
      expect(b.restored.from).toBe('replay');
      expect(b.restored.fallback).toMatch(reason);
      expect(view(b)).toBe(view(await replayOf(w.root, w.clock())));
      expect(b.snapshot.healthz()).toMatchObject({ started_from: 'replay' });
    });
  }

  it('span state that does not read back (sound file, wrong content): lanes from the snapshot, spans rebuilt from the logs', async () => {
    const w = await written();
    rewriteBody(w.snap, (lines) => [lines[0]!, '{"units":"not a list"}', ...lines.slice(2)]);
    const b = await open(w.root, w.clock());
    expect(b.restored.from).toBe('snapshot');
    expect(view(b)).toBe(view(await replayOf(w.root, w.clock())));
    expect(b.mirror!.stats()).toMatchObject({ state_rebuilt_from_logs: true });
  });

  it('a snapshot written with the mirror off is not used with it on', async () => {
    const w = await written({ mirror: false });
    const b = await open(w.root, w.clock());
    expect(b.restored.fallback).toMatch(/mirror off/);
    // and one written with it on serves a daemon with it off
    const w2 = await written();
    const c = await open(w2.root, w2.clock(), { mirror: false });
    expect(c.restored.from).toBe('snapshot');
  });

  it('logs it does not know are replayed whole; logs past the window are not rebuilt; a torn tail is skipped', async () => {
    const w = await written();
    const names = readdirSync(w.logs);
    // a session log written by someone else after the snapshot (e.g. an older daemon)
    cpSync(path.join(w.logs, names[1]!), path.join(w.logs, 'extra_session.jsonl'));
    const first = JSON.parse(readFileSync(path.join(w.logs, names[1]!), 'utf8').split('\n')[0]!) as { session: string };
    const lines = readFileSync(path.join(w.logs, 'extra_session.jsonl'), 'utf8').replaceAll(JSON.stringify(first.session), '"extra_session"');
    writeFileSync(path.join(w.logs, 'extra_session.jsonl'), lines);
    // a log older than the window
    const old = Date.now() / 1000 - 3 * 3600;
    utimesSync(path.join(w.logs, names[2]!), old, old);
    // a torn last line (a crash mid-write) after the snapshot
    appendFileSync(path.join(w.logs, names[3]!), '{"aep":"0.1","id":"torn');
    const b = await open(w.root, w.clock());
    expect(b.restored.from).toBe('snapshot');
    expect(b.restored.replay.files).toBe(2);
    expect(b.restored.replay.skippedLines).toBe(1);
    expect(view(b)).toBe(view(await replayOf(w.root, w.clock())));
    expect(b.identity.saveLanes().some((l) => l.session === 'extra_session')).toBe(true);
  });
});

describe('snapshot saves', () => {
  it("a save that cannot find a log's last event is abandoned; the previous snapshot stays and still restores right", async () => {
    const now = Date.now();
    const h = soakSchedule(10, now, 10 * 60_000, 60_000, 150);
    const root = tempDir();
    let clock = now - 10 * 60_000;
    const a = await openWorld({ root, epoch: 0, idPrefix: 'A', now: () => clock });
    const half = Math.floor(h.timeline.length / 2);
    const feed = (from: number, to: number) => {
      for (const { t, s, k } of h.timeline.slice(from, to)) {
        clock = t;
        a.feed([h.sessions[s]!.hooks[k]!], () => t);
      }
    };
    feed(0, half);
    expect(await a.snapshot.save('interval')).toBe(true);
    const first = readFileSync(path.join(root, 'state', 'snapshot'));
    feed(half, h.timeline.length);
    await a.drain();
    // a log loses its last line (as a write the disk refused would)
    const last = h.sessions[h.timeline.at(-1)!.s]!.sid;
    const f = path.join(root, 'log', 'hermes', `${last}.jsonl`);
    const text = readFileSync(f, 'utf8');
    writeFileSync(f, text.slice(0, text.lastIndexOf('\n', text.length - 2) + 1));
    expect(await a.snapshot.save('interval')).toBe(false);
    expect(a.snapshot.healthz()).toMatchObject({ saves: 1, save_failures: 1 });
    expect(readFileSync(path.join(root, 'state', 'snapshot'))).toEqual(first);
    await a.crash();
    const b = await open(root, clock);
    expect(b.restored.from).toBe('snapshot');
    expect(view(b)).toBe(view(await replayOf(root, clock)));
  });

  it('the snapshot is bounded by what memory holds: lanes by the session cap', async () => {
    const now = Date.now();
    const h = soakSchedule(30, now, 10 * 60_000, 60_000, 150);
    const root = tempDir();
    let clock = now - 10 * 60_000;
    const a = await openWorld({ root, epoch: 0, idPrefix: 'A', now: () => clock, maxSessions: 12 });
    for (const { t, s, k } of h.timeline) {
      clock = t;
      a.feed([h.sessions[s]!.hooks[k]!], () => t);
    }
    await a.close();
    const header = JSON.parse(readFileSync(path.join(root, 'state', 'snapshot'), 'utf8').split('\n')[0]!);
    expect(header.lanes).toBe(12);
    expect(header.files).toBe(30);
  });
});

function rewriteHeader(file: string, change: (h: Record<string, unknown>) => Record<string, unknown>): void {
  const b = readFileSync(file);
  const nl = b.indexOf(10);
  const h = change(JSON.parse(b.toString('utf8', 0, nl)) as Record<string, unknown>);
  writeFileSync(file, Buffer.concat([Buffer.from(`${JSON.stringify(h)}\n`), b.subarray(nl + 1)]));
}

/** Replace the body's lines and fix the header's length and CRC, as a writer with a bug would have written it. */
function rewriteBody(file: string, change: (lines: string[]) => string[]): void {
  const b = readFileSync(file);
  const nl = b.indexOf(10);
  const h = JSON.parse(b.toString('utf8', 0, nl)) as Record<string, unknown>;
  const body = Buffer.from(change(b.toString('utf8', nl + 1).split('\n')).join('\n'), 'utf8');
  const header = JSON.stringify({ ...h, body_bytes: body.length, crc32: crc32(body) }).padEnd(nl, ' ');
  writeFileSync(file, Buffer.concat([Buffer.from(`${header}\n`), body]));
}
