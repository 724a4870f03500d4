import { mkdtempSync, readFileSync, existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { replayRecentHistory } from '../../../src/history/replay.js';
import { ForeignHistory, foreignFileOf } from '../../../src/history/foreign-history.js';
import { checkEnvelope } from '../../../src/stream/envelope-check.js';
import { BridgeIngress, type IngressLog } from '../../../src/stream/ingress.js';
import type { WireEvent } from '../../../src/aep/wire.js';
import { MiniHub } from '../../support/mini-hub.js';
import { FaultyDisk } from '../../support/faulty-fs.js';
import { waitFor } from '../../support/processes.js';

const roots: string[] = [];
const histories: ForeignHistory[] = [];
afterEach(async () => {
  await Promise.all(histories.splice(0).map((h) => h.shutdown()));
});

function world() {
  const root = mkdtempSync(path.join(os.tmpdir(), 'aep-ingress-'));
  roots.push(root);
  const hub = new MiniHub();
  const history = new ForeignHistory({ historyDir: root, queueMax: 10_000, fsyncIntervalMs: 0 });
  histories.push(history);
  const mirrored: WireEvent[] = [];
  const ingress = new BridgeIngress({ hub, history, mirror: { mirrorForeign: (w) => void mirrored.push(w) } });
  return { root, hub, history, ingress, mirrored };
}

/** an event line as a foreign emitter might format it: spaces and an escape JSON.stringify would not write */
function line(o: { id: string; agent?: string; session?: string; seq?: number; type?: string }): WireEvent {
  const agent = o.agent ?? 'claude-code';
  const scoped = o.session === undefined;
  const text = scoped
    ? `{"aep": "0.1", "id": "${o.id}", "type": "agent.heartbeat", "time": "2026-07-03T10:14:00Z", "source": "aep://host-a/agent/${agent}", "agent": "${agent}", "data": {}}`
    : `{"aep":"0.1","id":"${o.id}","type":"${o.type ?? 'progress.status'}","time":"2026-07-03T10:14:00Z","source":"aep://host-a/agent/${agent}/session/${o.session}","agent":"${agent}","session":"${o.session}","seq":${o.seq ?? 0},"data":{"message":"caf\\u00e9"}}`;
  const r = checkEnvelope(JSON.parse(text), text);
  if (!r.ok) throw new Error(r.detail);
  return r.wire;
}

const readLines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

describe('BridgeIngress (AEP-0001 §7.4 dedupe, AEP-0003 §3.1 history, §5 fan-out)', () => {
  it('writes each event as received to ingest/{agent}/{session}.jsonl (agent-scoped to .agent.jsonl) and publishes it', async () => {
    const { root, hub, history, ingress, mirrored } = world();
    const batch = [line({ id: 'a1', session: 's_1', seq: 0 }), line({ id: 'a2', session: 's_1', seq: 1 }), line({ id: 'h1' })];
    expect(await ingress.ingest(batch)).toEqual({ status: 'accepted', accepted: 3, duplicates: 0 });
    const sessionFile = path.join(root, 'ingest', 'claude-code', 's_1.jsonl');
    expect(foreignFileOf(history.dir, batch[0]!)).toBe(sessionFile);
    expect(readLines(sessionFile)).toEqual([batch[0]!.line, batch[1]!.line]);
    expect(readLines(path.join(root, 'ingest', 'claude-code', '.agent.jsonl'))).toEqual([batch[2]!.line]);
    // the bytes as received: the escape and the spaces survive (a re-serialization would change them)
    expect(readFileSync(sessionFile, 'utf8')).toContain('caf\\u00e9');
    expect(hub.live.map((w) => w.line)).toEqual(batch.map((w) => w.line));
    expect(mirrored.map((w) => w.id)).toEqual(['a1', 'a2', 'h1']);
    // never re-sequenced or stamped
    expect(hub.live.every((w) => w.event['traceparent'] === undefined)).toBe(true);
    expect(hub.live[1]!.seq).toBe(1);
  });

  it('a redelivered event is not written or mirrored again, but is still published live', async () => {
    const { root, hub, ingress, mirrored } = world();
    const e = [line({ id: 'a1', session: 's_1' }), line({ id: 'a2', session: 's_1', seq: 1 })];
    await ingress.ingest(e);
    expect(await ingress.ingest([e[1]!, line({ id: 'a3', session: 's_1', seq: 2 })])).toEqual({ status: 'accepted', accepted: 1, duplicates: 1 });
    expect(readLines(path.join(root, 'ingest', 'claude-code', 's_1.jsonl')).map((l) => JSON.parse(l).id)).toEqual(['a1', 'a2', 'a3']);
    expect(mirrored.map((w) => w.id)).toEqual(['a1', 'a2', 'a3']);
    expect(hub.live.map((w) => w.id)).toEqual(['a1', 'a2', 'a2', 'a3']);
    expect(hub.held.map((w) => w.id)).toEqual(['a1', 'a2', 'a3']);
  });

  it('the same (source, id) in two concurrent batches and twice in one batch is written once', async () => {
    const { root, ingress } = world();
    const e = line({ id: 'a1', session: 's_1' });
    const [x, y] = await Promise.all([ingress.ingest([e, e]), ingress.ingest([e])]);
    expect(x).toEqual({ status: 'accepted', accepted: 1, duplicates: 1 });
    expect(y).toEqual({ status: 'accepted', accepted: 0, duplicates: 1 });
    expect(readLines(path.join(root, 'ingest', 'claude-code', 's_1.jsonl'))).toHaveLength(1);
  });

  it('two emitters with the same id are two events (the key is (source, id))', async () => {
    const { ingress } = world();
    const r = await ingress.ingest([line({ id: 'same', session: 's_1', agent: 'alpha' }), line({ id: 'same', session: 's_1', agent: 'beta' })]);
    expect(r).toEqual({ status: 'accepted', accepted: 2, duplicates: 0 });
  });

  it('a foreign agent named hermes never lands in the Hermes lane, and the lane rebuild never sees it', async () => {
    const { root, ingress } = world();
    await ingress.ingest([line({ id: 'x1', agent: 'hermes', session: 's_foreign', type: 'session.started' })]);
    expect(existsSync(path.join(root, 'ingest', 'hermes', 's_foreign.jsonl'))).toBe(true);
    expect(existsSync(path.join(root, 'hermes'))).toBe(false);
    const seen: unknown[] = [];
    const counts = await replayRecentHistory(root, 3_600_000, Date.now(), (ev) => seen.push(ev));
    expect(seen).toEqual([]);
    expect(counts.files).toBe(0);
  });

  it("a sequenced event naming one of this daemon's own sessions is refused whole as a conflict: nothing written, mirrored or published; counted", async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'aep-ingress-'));
    const hub = new MiniHub();
    const history = new ForeignHistory({ historyDir: root, queueMax: 10_000, fsyncIntervalMs: 0 });
    histories.push(history);
    const mirrored: WireEvent[] = [];
    const ownsSession = (s: string) => s === 'h_own';
    const ingress = new BridgeIngress({ hub, history, mirror: { mirrorForeign: (w) => void mirrored.push(w) }, ownsSession });
    const batch = [line({ id: 'ok1', session: 's_other' }), line({ id: 'forged', agent: 'hermes', session: 'h_own', seq: 9, type: 'session.ended' })];
    expect(await ingress.ingest(batch)).toEqual({
      status: 'conflict',
      index: 1,
      reason: "the session is one of this daemon's own: its positions are assigned here",
    });
    expect(existsSync(path.join(root, 'ingest'))).toBe(false);
    expect([hub.live, mirrored]).toEqual([[], []]);
    expect(ingress.stats()['own_session_refused']).toBe(1);
    // a seq-less foreign-emitter event (attention.routed, a command) to an own session is part of its view: taken
    const routedText = `{"aep":"0.1","id":"r1","type":"attention.routed","time":"2026-07-03T10:14:00Z","source":"aep://host-a/agent/router","agent":"router","session":"h_own","data":{}}`;
    const routed = checkEnvelope(JSON.parse(routedText), routedText);
    if (!routed.ok) throw new Error(routed.detail);
    expect(await ingress.ingest([routed.wire])).toEqual({ status: 'accepted', accepted: 1, duplicates: 0 });
  });

  it('a refusing log refuses the batch: nothing written, nothing published', async () => {
    const hub = new MiniHub();
    const log: IngressLog = { refusal: () => 'log: write failed: ENOSPC', write: () => Promise.reject(new Error('not called')) };
    const r = await new BridgeIngress({ hub, history: log }).ingest([line({ id: 'a1', session: 's_1' })]);
    expect(r).toEqual({ status: 'refused', reason: 'log: write failed: ENOSPC' });
    expect(hub.live).toEqual([]);
  });

  it('a batch the log lost is refused and may be retried (its keys are released)', async () => {
    const hub = new MiniHub();
    let fail = true;
    const log: IngressLog = {
      refusal: () => undefined,
      write: async (ws) => (fail ? { written: 0, retained: 0, lost: ws.length, reason: 'write failed: EIO' } : { written: ws.length, retained: 0, lost: 0 }),
    };
    const ingress = new BridgeIngress({ hub, history: log });
    const e = [line({ id: 'a1', session: 's_1' })];
    expect(await ingress.ingest(e)).toEqual({ status: 'refused', reason: 'write failed: EIO' });
    expect(hub.live).toEqual([]);
    fail = false;
    expect(await ingress.ingest(e)).toEqual({ status: 'accepted', accepted: 1, duplicates: 0 });
    expect(hub.held.map((w) => w.id)).toEqual(['a1']);
  });

  it('lines held after a failed write are published once they land, never twice', async () => {
    const hub = new MiniHub();
    let land!: (v: { written: number; lost: number }) => void;
    const final = new Promise<{ written: number; lost: number }>((r) => (land = r));
    const log: IngressLog = {
      refusal: () => undefined,
      write: async (ws) => ({ written: 0, retained: ws.length, lost: 0, reason: 'write failed: ENOSPC', final }),
    };
    const ingress = new BridgeIngress({ hub, history: log });
    const e = [line({ id: 'a1', session: 's_1' })];
    expect((await ingress.ingest(e)).status).toBe('refused');
    // the retry while they wait: a duplicate, not a second write
    expect(await ingress.ingest(e)).toEqual({ status: 'accepted', accepted: 0, duplicates: 1 });
    // nothing is published before the history holds it
    expect(hub.live).toEqual([]);
    land({ written: 1, lost: 0 });
    await final;
    await new Promise((r) => setImmediate(r));
    expect(hub.held.map((w) => w.id)).toEqual(['a1']);
    expect(ingress.stats()['in_flight']).toBe(0);
  });

  it('a mirror that throws is counted; the events are still written and published', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'aep-ingress-'));
    const hub = new MiniHub();
    const history = new ForeignHistory({ historyDir: root, queueMax: 100 });
    histories.push(history);
    const ingress = new BridgeIngress({
      hub,
      history,
      mirror: {
        mirrorForeign: () => {
          throw new Error('boom');
        },
      },
    });
    expect((await ingress.ingest([line({ id: 'a1', session: 's_1' })])).status).toBe('accepted');
    expect(hub.held).toHaveLength(1);
    expect(ingress.stats()['mirror_errors']).toBe(1);
    expect(readdirSync(path.join(root, 'ingest', 'claude-code'))).toEqual(['s_1.jsonl']);
  });

  it('a full disk: the batch is refused (503 at the route), ingest/ is degraded, and once space returns the events land once, in order', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'aep-ingress-'));
    const disk = new FaultyDisk();
    const hub = new MiniHub();
    const history = new ForeignHistory({ historyDir: root, queueMax: 100, fsyncIntervalMs: 0, open: disk.open });
    histories.push(history);
    const ingress = new BridgeIngress({ hub, history });
    const first = line({ id: 'a1', session: 's_1' });
    await ingress.ingest([first]);
    disk.remaining = 10;
    const held = line({ id: 'a2', session: 's_1', seq: 1 });
    expect(await ingress.ingest([held])).toMatchObject({ status: 'refused' });
    expect(history.health()).toMatchObject({ sink: 'ingest_log' });
    // while failing, new batches are refused before anything is written
    expect(await ingress.ingest([line({ id: 'a3', session: 's_1', seq: 2 })])).toMatchObject({ status: 'refused' });
    disk.remaining = Number.POSITIVE_INFINITY;
    await waitFor('the held line landed and was published', () => (hub.held.length === 2 ? true : undefined), 5_000);
    await waitFor('recovered', () => (history.refusal() === undefined ? true : undefined), 5_000);
    expect(await ingress.ingest([held, line({ id: 'a3', session: 's_1', seq: 2 })])).toEqual({ status: 'accepted', accepted: 1, duplicates: 1 });
    expect(readLines(path.join(root, 'ingest', 'claude-code', 's_1.jsonl')).map((l) => JSON.parse(l).id)).toEqual(['a1', 'a2', 'a3']);
  });
});
