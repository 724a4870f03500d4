import { appendFileSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REBUILD_MAX_BYTES, rebuildBuffer } from '../../../src/history/recent.js';
import type { WireEvent } from '../../../src/aep/wire.js';

function ev(agent: string, session: string | undefined, seq: number, pad = ''): string {
  const base = { aep: '0.1', id: `${agent}-${session ?? 'agent'}-${seq}`, type: session ? 'progress.status' : 'agent.heartbeat', time: '2026-07-03T10:14:00Z' };
  const src = `aep://h/agent/${agent}${session ? `/session/${session}` : ''}`;
  return JSON.stringify({ ...base, source: src, agent, ...(session ? { session, seq } : {}), data: { message: `m${seq}${pad}` } });
}

/** a history file of `n` events; mtime `age` seconds ago */
function file(root: string, rel: string, lines: string[], ageS: number): void {
  const f = path.join(root, rel);
  mkdirSync(path.dirname(f), { recursive: true });
  writeFileSync(f, lines.map((l) => `${l}\n`).join(''));
  const t = Date.now() / 1000 - ageS;
  utimesSync(f, t, t);
}

function rebuild(root: string, limits: { sessions: number; buffer: number; maxBytes: number }) {
  const batches: WireEvent[][] = [];
  const report = rebuildBuffer(root, limits, (ws) => batches.push([...ws]));
  return { report, batches };
}

describe('rebuildBuffer: the replay buffer refilled from the history at start (AEP-0003 §5, §7)', () => {
  it('the newest files of every agent, the last `buffer` lines of each, byte for byte, oldest file first', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'aep-rebuild-'));
    const own = Array.from({ length: 5 }, (_, i) => ev('hermes', 's_own', i));
    // a foreign line keeps its own formatting: what is published is the history's bytes
    const foreign = [
      ' {"aep":"0.1", "id":"f0","type":"progress.status","time":"2026-07-03T10:14:00Z","source":"aep://x/agent/claude-code","agent":"claude-code","session":"s_f","seq":0}'.trim(),
    ];
    file(root, 'hermes/s_own.jsonl', own, 10);
    file(root, 'ingest/claude-code/s_f.jsonl', foreign, 5);
    file(root, 'ingest/claude-code/.agent.jsonl', [ev('claude-code', undefined, 0)], 1);
    file(root, 'hermes/s_old.jsonl', [ev('hermes', 's_old', 0)], 100);
    const { report, batches } = rebuild(root, { sessions: 3, buffer: 3, maxBytes: 1 << 20 });
    expect(report).toMatchObject({ files: 3, events: 5, skipped: 0 });
    expect(batches.map((b) => b.map((w) => w.line))).toEqual([own.slice(2), foreign, [ev('claude-code', undefined, 0)]]);
    expect(batches.map((b) => b[0]!.origin)).toEqual(['own', 'ingest', 'ingest']);
    expect(batches[0]!.map((w) => w.seq)).toEqual([2, 3, 4]);
    expect(batches[2]![0]!.session).toBeUndefined();
  });

  it('a torn last line and lines that are no event are skipped; a file longer than the buffer is read from its tail', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'aep-rebuild-'));
    const lines = Array.from({ length: 2000 }, (_, i) => ev('hermes', 's_1', i, 'x'.repeat(100)));
    file(root, 'hermes/s_1.jsonl', [...lines.slice(0, 1998), 'not json', lines[1998]!], 1);
    appendFileSync(path.join(root, 'hermes/s_1.jsonl'), lines[1999]!.slice(0, 40));
    const { report, batches } = rebuild(root, { sessions: 10, buffer: 3, maxBytes: 1 << 20 });
    expect(batches[0]!.map((w) => w.seq)).toEqual([1997, 1998]);
    expect(report.skipped).toBe(1);
    // read backwards: far less than the file
    expect(report.bytes).toBeLessThan(100 * 1024);
  });

  it('stops at maxBytes over all files, never publishing a line the budget cut', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'aep-rebuild-'));
    const a = Array.from({ length: 50 }, (_, i) => ev('hermes', 's_a', i, 'y'.repeat(200)));
    file(root, 'hermes/s_a.jsonl', a, 2);
    file(root, 'hermes/s_b.jsonl', [ev('hermes', 's_b', 0)], 1);
    const { batches } = rebuild(root, { sessions: 10, buffer: 1000, maxBytes: 2000 });
    const lines = batches.flat().map((w) => w.line);
    for (const l of lines) expect([...a, ev('hermes', 's_b', 0)]).toContain(l);
    expect(batches.flat().reduce((n, w) => n + w.line.length + 1, 0)).toBeLessThanOrEqual(2000);
    // the newest file first in the budget, the older one's tail as far as it goes
    expect(lines.at(-1)).toBe(ev('hermes', 's_b', 0));
    expect(lines.length).toBeGreaterThan(1);
  });

  it('an empty or missing log dir rebuilds nothing', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'aep-rebuild-'));
    expect(rebuild(root, { sessions: 10, buffer: 10, maxBytes: 1 << 20 }).batches).toEqual([]);
    expect(rebuild(path.join(root, 'absent'), { sessions: 10, buffer: 10, maxBytes: 1 << 20 }).report.files).toBe(0);
  });

  it('start-up cost is capped by REBUILD_MAX_BYTES: 200 sessions x 1,000 events at the default limits (figure printed)', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'aep-rebuild-'));
    for (let s = 0; s < 200; s++)
      file(
        root,
        `hermes/s_${s}.jsonl`,
        Array.from({ length: 1000 }, (_, i) => ev('hermes', `s_${s}`, i)),
        s,
      );
    const { report, batches } = rebuild(root, { sessions: 1000, buffer: 1000, maxBytes: 128 * 1024 * 1024 });
    expect(report.bytes).toBeLessThanOrEqual(REBUILD_MAX_BYTES);
    // the newest sessions are the ones rebuilt, each with its newest events
    expect(batches.at(-1)![0]!.session).toBe('s_0');
    expect(batches.at(-1)!.at(-1)!.seq).toBe(999);
    console.log(`buffer rebuild: ${report.files} files, ${report.events} events, ${report.bytes} bytes in ${report.ms} ms`);
  });
});
