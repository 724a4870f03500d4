import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSettings } from '../../../src/daemon/settings.js';
import { silentLogger } from '../../../src/core/logger.js';
import { startDaemon, type RunningDaemon } from '../../../src/daemon/main.js';
import { checkEnvelope } from '../../../src/stream/envelope-check.js';
import { OWN_SESSION_CONFLICT } from '../../../src/stream/ingress.js';
import type { WireEvent } from '../../../src/aep/wire.js';
import { MiniHub } from '../../support/mini-hub.js';
import { ROOT } from '../../support/paths.js';
import { httpCall } from '../../support/processes.js';

const HOOKS = readFileSync(path.join(ROOT, 'fixtures', 'hermes-recorded', 'raw', 'oneshot-dangerous-command.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean);
const running: RunningDaemon[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((d) => d.close()));
});

function dirs() {
  const root = mkdtempSync(path.join(os.tmpdir(), 'aep-wiring-'));
  return {
    AEP_STATE_DIR: path.join(root, 'state'),
    AEP_LOG_DIR: path.join(root, 'logs'),
    AEP_SOCKET: path.join(root, 'h.sock'),
    AEP_FSYNC_INTERVAL_MS: '0',
    AEP_SOURCE_HOST: 'wiring-host',
  };
}

/** a daemon in process with a hub that checks, at each publish, that the history already holds the line */
async function start(env: Record<string, string>) {
  const hub = new MiniHub();
  const notYetDurable: string[] = [];
  const publish = hub.publish.bind(hub);
  hub.publish = (ws: readonly WireEvent[]) => {
    for (const w of ws) {
      if (w.origin !== 'own') continue;
      const file = path.join(env['AEP_LOG_DIR']!, 'hermes', `${w.session}.jsonl`);
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        /* not there yet */
      }
      if (!text.includes(`${w.line}\n`)) notYetDurable.push(w.id);
    }
    publish(ws);
  };
  const d = await startDaemon(readSettings(env), silentLogger, { hub: () => hub });
  running.push(d);
  return { d, hub, notYetDurable };
}

/** One hook, answered once the daemon serves hooks: a 503 while its start-up spool drain runs is retried (as the shim spools it), until a deadline. */
async function post(socketPath: string, body: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await httpCall({ socketPath }, { method: 'POST', path: '/hook', headers: { 'content-type': 'application/json' }, body });
    if (r.status !== 503 || Date.now() > deadline) return r;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const historyLines = (env: Record<string, string>, session: string) =>
  readFileSync(path.join(env['AEP_LOG_DIR']!, 'hermes', `${session}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean);

describe('the daemon wiring of the AEP stream', () => {
  it('own events reach the hub only after the history holds them, as the history’s bytes; a restart refills the buffer', async () => {
    const env = dirs();
    const a = await start(env);
    for (const h of HOOKS) expect((await post(env.AEP_SOCKET, h)).status).toBe(200);
    const session = a.hub.held[0]!.session!;
    const lines = historyLines(env, session);
    expect(a.hub.held.map((w) => w.line)).toEqual(lines);
    expect(a.notYetDurable).toEqual([]);
    expect(a.hub.held.every((w) => w.origin === 'own')).toBe(true);
    const health = JSON.parse((await httpCall({ socketPath: env.AEP_SOCKET }, { path: '/healthz' })).body);
    expect(health.stream.events).toBe(lines.length);
    await a.d.close();
    running.length = 0;

    const b = await start(env);
    expect(b.hub.held.map((w) => w.line)).toEqual(lines);
    expect(b.d.stream!.rebuilt.events).toBe(lines.length);
  });

  it('foreign events are kept apart: a foreign `hermes` session of the same name never moves the own lane’s seq', async () => {
    const env = dirs();
    const a = await start(env);
    for (const h of HOOKS.slice(0, 3)) expect((await post(env.AEP_SOCKET, h)).status).toBe(200);
    const own = a.hub.held.filter((w) => w.origin === 'own');
    const session = own[0]!.session!;
    const text = JSON.stringify({
      aep: '0.1',
      id: 'foreign-1',
      type: 'progress.status',
      time: '2026-07-03T10:14:00Z',
      source: `aep://elsewhere/agent/hermes/session/${session}`,
      agent: 'hermes',
      session,
      seq: 9999,
      epoch: 77,
      data: {},
    });
    const r = checkEnvelope(JSON.parse(text), text);
    if (!r.ok) throw new Error(r.detail);
    // the session's positions are this daemon's alone: the ingress refuses the event, writes nothing
    expect(await a.d.stream!.ingress.ingest([r.wire])).toEqual({ status: 'conflict', index: 0, reason: OWN_SESSION_CONFLICT });
    const foreignFile = path.join(env.AEP_LOG_DIR, 'ingest', 'hermes', `${session}.jsonl`);
    expect(existsSync(foreignFile)).toBe(false);
    // an ingest log an earlier version wrote still holds such a line: the rebuild below must keep it out of the own lane
    mkdirSync(path.dirname(foreignFile), { recursive: true });
    writeFileSync(foreignFile, `${text}\n`);
    await a.d.close();
    running.length = 0;

    const b = await start(env);
    // the rebuilt buffer holds both, the foreign one as received
    expect(b.hub.held.find((w) => w.id === 'foreign-1')?.line).toBe(text);
    expect(b.hub.held.find((w) => w.id === 'foreign-1')?.origin).toBe('ingest');
    const before = b.hub.live.length;
    expect((await post(env.AEP_SOCKET, HOOKS[3]!)).status).toBe(200);
    const fresh = b.hub.live.slice(before).filter((w) => w.origin === 'own' && w.session === session);
    expect(fresh.length).toBeGreaterThan(0);
    // a new process is a new epoch of the own lane (AEP-0001 §7.2): the foreign epoch 77 / seq 9999 line was never read as its state
    expect(fresh[0]!.epoch).toBe(b.d.epoch);
    expect(fresh[0]!.seq).toBe(0);
    expect(b.d.epoch).toBeGreaterThan(own.at(-1)!.epoch);
    expect(historyLines(env, session).some((l) => l.includes('foreign-1'))).toBe(false);
  });
});
