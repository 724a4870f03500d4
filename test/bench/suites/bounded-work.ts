// Suite `bounded-work`: how long the in-process bounds take to hold, each against the same work without the bound (or
// against the configured deadline), measured in the same run. These were wall-clock upper bounds in the unit tests
// (json-body, recency-map, config/paths, stream/socket/handshake, stream/backpressure); the tests keep what each
// bound does (the refusal, the eviction, the deadline's answer, the dropped socket, the kick), the time is measured here.
//   - a JSON body of a million keys, refused at the node cap, vs an accepted body of as many nodes as the cap lets through;
//   - 300,000 inserts into a RecencyMap capped at 50,000 (250,000 evictions) vs the same inserts into one that never evicts;
//   - 100,000 events published past two stalled subscribers (kicked) vs the same events published to nobody;
//   - a directory check whose probe never answers, refused at its 200 ms deadline, vs that deadline;
//   - closing a listener that holds an upgraded socket with a 100 ms grace, vs that grace.
// The ratios of the first three would be several times higher if the bound stopped bounding (a scan to the end of
// the body, an eviction that walks the holes, a publish that waits for a subscriber): those carry a budget.
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import os from 'node:os';
import type { Figure, Suite } from '../bench-types.js';
import { wireOf, type WireEvent } from '../../../src/aep/wire.js';
import { checkDirectories } from '../../../src/config/paths.js';
import { StreamHub } from '../../../src/stream/stream-hub.js';
import { openListeners } from '../../../src/transport/listeners.js';
import { scanJson } from '../../../src/transport/json-scan.js';
import { RecencyMap } from '../../../src/util/recency-map.js';
import { waitFor } from '../../support/processes.js';
import { StalledSink } from '../../support/stalled-sink.js';
import { dist, interleaved, ratioFigure, round } from '../support/stats.js';

const CAP = 200_000;
const body = (keys: number) => Buffer.from(`{"hook_event_name":"x","tool_input":{${Array.from({ length: keys }, (_, i) => `"k${i}":0`).join(',')}}}`);

/** ms of one call of `fn` */
function timed(fn: () => unknown): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

async function timedAsync(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

function jsonScan(rounds: number): Promise<Record<'refused' | 'accepted', number[]>> {
  const million = body(1_000_000);
  // each key is two nodes (the key, its value): the cap lets CAP / 2 keys through before it refuses
  const asMany = body(CAP / 2);
  return interleaved(rounds, {
    refused: () => {
      let r: ReturnType<typeof scanJson> | undefined;
      const ms = timed(() => (r = scanJson(million, { maxNodes: CAP, maxDepth: 64 })));
      if (r?.ok !== false || r.reason !== 'too-many-nodes') throw new Error('bounded-work: the million-key body was not refused');
      return Promise.resolve(ms);
    },
    accepted: () => {
      let r: ReturnType<typeof scanJson> | undefined;
      const ms = timed(() => (r = scanJson(asMany, { maxNodes: 10 * CAP, maxDepth: 64 })));
      if (!r?.ok) throw new Error('bounded-work: the yardstick body was refused');
      return Promise.resolve(ms);
    },
  });
}

function recency(rounds: number): Promise<Record<'evicting' | 'keeping', number[]>> {
  const N = 300_000;
  const keys = Array.from({ length: N }, (_, i) => `event-${i}`);
  const fill = (cap: number) => () => {
    const m = new RecencyMap<string, number>(cap);
    const ms = timed(() => {
      for (let i = 0; i < N; i++) m.set(keys[i]!, i);
    });
    if (m.size !== Math.min(cap, N)) throw new Error(`bounded-work: the map holds ${m.size}`);
    return Promise.resolve(ms);
  };
  return interleaved(rounds, { evicting: fill(50_000), keeping: fill(N) });
}

let ids = 0;
function ev(seq: number, severity: string): WireEvent {
  const e = {
    aep: '0.1',
    id: `W${ids++}`,
    type: 'tool.completed',
    time: '2026-07-03T10:00:00Z',
    source: 'aep://h/agent/a',
    agent: 'a',
    session: 's',
    seq,
    severity,
    subject: 'x'.repeat(100),
  };
  return wireOf(e, JSON.stringify(e), 'ingest');
}

function publishing(rounds: number): Promise<Record<'stalled' | 'nobody', number[]>> {
  const N = 100_000;
  const events = Array.from({ length: N }, (_, i) => ev(1000 + i, i % 2 ? 'warning' : 'info'));
  const first = Array.from({ length: 1000 }, (_, i) => ev(i, 'notice'));
  const hub = () => new StreamHub({ buffer: 1000, sessions: 10, maxBytes: 1e8, clientBytes: 64 * 1024, subscriptions: 8 });
  const run = async (subscribers: boolean): Promise<number> => {
    const h = hub();
    h.publish(first);
    const stalled = new StalledSink();
    const replaying = new StalledSink();
    if (subscribers) {
      h.subscribe({ filter: () => true }, stalled);
      h.subscribe({ filter: () => true, from: [{ session: 's', epoch: 0, seq: 0 }] }, replaying);
      await waitFor('live', () => stalled.replayDone);
    }
    const ms = timed(() => {
      for (const e of events) h.publish([e]);
    });
    if (subscribers && (stalled.kicked === undefined || replaying.kicked === undefined)) throw new Error('bounded-work: a stalled subscriber was not kicked');
    return ms;
  };
  return interleaved(rounds, { stalled: () => run(true), nobody: () => run(false) });
}

const DIR_DEADLINE_MS = 200;
async function dirDeadline(rounds: number): Promise<number[]> {
  const out: number[] = [];
  const probe = (d: string) => (d.endsWith('hung') ? new Promise<undefined>(() => {}) : Promise.resolve(undefined));
  for (let i = 0; i < rounds; i++) {
    let refused = false;
    const ms = await timedAsync(() =>
      checkDirectories(
        [
          ['AEP_STATE_DIR', '/bench/ok'],
          ['AEP_LOG_DIR', '/bench/hung'],
        ],
        { probe, timeoutMs: DIR_DEADLINE_MS },
      ).catch(() => (refused = true)),
    );
    if (!refused) throw new Error('bounded-work: the hung directory was not refused');
    out.push(ms);
  }
  return out;
}

const GRACE_MS = 100;
async function closeGrace(rounds: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const held: Duplex[] = [];
    const listening = await openListeners(
      (_req, res) => res.end(),
      { tcp: { host: '127.0.0.1', port: 0 } },
      (_req, socket) => held.push(socket),
    );
    const client = connect(Number(new URL(listening.url!).port), '127.0.0.1');
    client.on('error', () => undefined);
    client.write('GET /socket HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
    await waitFor('the upgrade handed over', () => held[0]);
    out.push(await timedAsync(() => listening.close(GRACE_MS)));
    if (!held[0]!.destroyed) throw new Error('bounded-work: the held socket survived the close');
    client.destroy();
  }
  return out;
}

export const boundedWork: Suite = {
  name: 'bounded-work',
  about:
    'in-process bounds (the JSON node cap, RecencyMap eviction, the stream hub past stalled subscribers, the directory-check deadline, the listener close grace), each against the same work unbounded or against its configured deadline, rounds interleaved',
  async run(ctx) {
    const rounds = ctx.short ? 5 : 15;
    const detail = { rounds, load_avg_1m: round(os.loadavg()[0]!, 2), cores: os.availableParallelism() };
    const scan = await jsonScan(rounds);
    ctx.log('bounded-work: json scan done');
    const rec = await recency(rounds);
    ctx.log('bounded-work: recency map done');
    const pub = await publishing(rounds);
    ctx.log('bounded-work: publishing done');
    const dir = await dirDeadline(rounds);
    const grace = await closeGrace(rounds);
    ctx.log('bounded-work: deadlines done');
    const figures: Figure[] = [
      ratioFigure(
        {
          id: 'bounded.json_node_cap',
          label: `JSON scan of a body of 1,000,000 keys, refused at the ${CAP.toLocaleString('en')}-node cap`,
          measure: dist(scan.refused, 'ms'),
          yardstick: {
            label: `the same scan of an accepted body of ${(CAP / 2).toLocaleString('en')} keys (as many nodes)`,
            measure: dist(scan.accepted, 'ms'),
          },
          detail: { ...detail, was: 'json-body.test.ts: < 1,000 ms' },
        },
        { max: 2 },
      ),
      ratioFigure(
        {
          id: 'bounded.recency_eviction',
          label: 'RecencyMap: 300,000 inserts into a map capped at 50,000 (250,000 evictions)',
          measure: dist(rec.evicting, 'ms'),
          yardstick: { label: 'the same inserts into a map that never evicts', measure: dist(rec.keeping, 'ms') },
          detail: { ...detail, was: 'recency-map.test.ts: < 3,000 ms' },
        },
        { max: 3 },
      ),
      ratioFigure(
        {
          id: 'bounded.publish_past_stalled',
          label: 'stream hub: 100,000 events published past two stalled subscribers (both kicked)',
          measure: dist(pub.stalled, 'ms'),
          yardstick: { label: 'the same events published with no subscriber', measure: dist(pub.nobody, 'ms') },
          detail: { ...detail, was: 'backpressure.test.ts: < 20,000 ms' },
        },
        { max: 3 },
      ),
      ratioFigure({
        id: 'bounded.dir_check_deadline',
        label: `directory check, a probe that never answers: refused at its ${DIR_DEADLINE_MS} ms deadline`,
        measure: dist(dir, 'ms'),
        yardstick: { label: 'its deadline (configured)', measure: { value: DIR_DEADLINE_MS, unit: 'ms' } },
        detail: { ...detail, was: 'config/paths.test.ts: < 2,000 ms' },
      }),
      ratioFigure({
        id: 'bounded.listener_close_grace',
        label: `listener close with an upgraded socket held, grace ${GRACE_MS} ms`,
        measure: dist(grace, 'ms'),
        yardstick: { label: 'its grace (configured)', measure: { value: GRACE_MS, unit: 'ms' } },
        detail: { ...detail, was: 'stream/socket/handshake.test.ts: < 2,000 ms' },
      }),
    ];
    return figures;
  },
};
