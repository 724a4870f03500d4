import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSettings } from '../../src/daemon/settings.js';
import { silentLogger } from '../../src/core/logger.js';
import { startDaemon, type RunningDaemon } from '../../src/daemon/main.js';
import { ROOT } from '../support/paths.js';
import { httpCall } from '../support/processes.js';

/**
 * The own lane of a Hermes session against a token holder who ingests
 * events naming it (POST /events): the real daemon in process (real hub,
 * ingress, ingest log and routes), driven over its Unix socket, asserting on
 * what a consumer resuming with `Last-Event-ID` receives.
 */
const HOOKS = readFileSync(path.join(ROOT, 'fixtures', 'hermes-recorded', 'raw', 'oneshot-dangerous-command.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean);
const running: RunningDaemon[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((d) => d.close()));
});

function dirs() {
  const root = mkdtempSync(path.join(os.tmpdir(), 'aep-own-lane-'));
  return {
    AEP_STATE_DIR: path.join(root, 'state'),
    AEP_LOG_DIR: path.join(root, 'logs'),
    AEP_SOCKET: path.join(root, 'h.sock'),
    AEP_FSYNC_INTERVAL_MS: '0',
    AEP_SOURCE_HOST: 'lane-host',
  };
}

async function hook(socketPath: string, body: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await httpCall({ socketPath }, { method: 'POST', path: '/hook', headers: { 'content-type': 'application/json' }, body });
    if (r.status !== 503 || Date.now() > deadline) return r;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const ingest = (socketPath: string, ev: Record<string, unknown>) =>
  httpCall(
    { socketPath },
    { method: 'POST', path: '/events', headers: { 'content-type': 'application/json', 'aep-version': '0.1' }, body: JSON.stringify(ev) },
  );

interface Got {
  readonly ids: string[];
  readonly events: Record<string, unknown>[];
  readonly comments: string[];
}

/** A replay-only subscription (`live=0`): the SSE response ends once the replay is sent. */
async function replay(socketPath: string, query: string, lastEventId?: string): Promise<Got> {
  const r = await httpCall({ socketPath }, { path: `/stream?live=0${query}`, headers: lastEventId ? { 'last-event-id': lastEventId } : {} });
  expect(r.status).toBe(200);
  const got: Got = { ids: [], events: [], comments: [] };
  for (const block of r.body.split('\n\n')) {
    for (const line of block.split('\n')) {
      if (line.startsWith('id: ')) got.ids.push(line.slice(4));
      else if (line.startsWith('data: ')) got.events.push(JSON.parse(line.slice(6)) as Record<string, unknown>);
      else if (line.startsWith(': ')) got.comments.push(line.slice(2));
    }
  }
  return got;
}

const seqsOf = (g: Got, session: string) => g.events.filter((e) => e['session'] === session && typeof e['seq'] === 'number').map((e) => e['seq'] as number);

describe('a Hermes session’s stream positions belong to this daemon alone', () => {
  it('a foreign `session.ended` at a later seq never takes the own lane: the resume still gets every real event, once, and the forgery is nowhere', async () => {
    const env = dirs();
    const d = await startDaemon(readSettings(env), silentLogger);
    running.push(d);
    for (const h of HOOKS.slice(0, 2)) expect((await hook(env.AEP_SOCKET, h)).status).toBe(200);
    const before = await replay(env.AEP_SOCKET, '&from=all');
    const session = before.events[0]!['session'] as string;
    const seqBefore = Math.max(...seqsOf(before, session));

    // an AEP_TOKEN holder speaks for a live Hermes session from another source, a position far ahead
    const forged = {
      aep: '0.1',
      id: 'forged-end',
      type: 'session.ended',
      time: '2026-07-03T10:14:00Z',
      source: `aep://elsewhere/agent/hermes/session/${session}`,
      agent: 'hermes',
      session,
      seq: 1000,
      epoch: d.epoch,
      data: { reason: 'normal' },
    };
    const refused = await ingest(env.AEP_SOCKET, forged);
    for (const h of HOOKS.slice(2)) expect((await hook(env.AEP_SOCKET, h)).status).toBe(200);

    // the consumer that took the forged position as its own resumes from it: nothing real is skipped
    const resumed = await replay(env.AEP_SOCKET, '', `${session}:${d.epoch}:1000`);
    const all = await replay(env.AEP_SOCKET, '&from=all');
    const real = seqsOf({ ...all, events: all.events.filter((e) => e['id'] !== 'forged-end') }, session).filter((s) => s > seqBefore);
    expect(real.length).toBeGreaterThan(0);
    expect(seqsOf(resumed, session).filter((s) => s > seqBefore)).toEqual(real);
    // no position appears twice, the forged one nowhere
    const allSeqs = seqsOf(all, session);
    expect(new Set(allSeqs).size).toBe(allSeqs.length);
    expect(all.events.some((e) => e['id'] === 'forged-end')).toBe(false);
    expect(resumed.events.some((e) => e['id'] === 'forged-end')).toBe(false);
    expect(all.ids.some((id) => id === `${session}:${d.epoch}:1000`)).toBe(false);

    // refused as a conflict, counted, and never written to the ingest log (so never rebuilt, mirrored or tailed)
    expect([refused.status, JSON.parse(refused.body).error]).toEqual([409, 'conflict']);
    expect(existsSync(path.join(env.AEP_LOG_DIR, 'ingest', 'hermes', `${session}.jsonl`))).toBe(false);
    const health = JSON.parse((await httpCall({ socketPath: env.AEP_SOCKET }, { path: '/healthz' })).body);
    expect(health.stream.ingest.own_session_refused).toBe(1);
  });

  it.each([
    ['the host in capitals', (h: string) => `aep://${h.toUpperCase()}/agent/hermes/session/`],
    ['a port', (h: string) => `aep://${h}:1/agent/hermes/session/`],
    ['a capitalised scheme', (h: string) => `AEP://${h}/agent/hermes/session/`],
    ['a trailing dot on the host', (h: string) => `aep://${h}./agent/hermes/session/`],
    ['doubled and percent-encoded path segments', (h: string) => `aep://${h}//agent/%68ermes/session/`],
    ['user info', (h: string) => `aep://someone@${h}/Agent/HERMES/session/`],
  ])('a variant of the own source (%s) is refused like the exact one, and counted', async (_name, variant) => {
    const env = dirs();
    const d = await startDaemon(readSettings(env), silentLogger);
    running.push(d);
    const session = 'not-yet-a-hermes-session';
    const ev = {
      aep: '0.1',
      id: 'variant-1',
      type: 'progress.status',
      time: '2026-07-03T10:14:00Z',
      source: `${variant(env.AEP_SOURCE_HOST)}${session}`,
      agent: 'hermes',
      session,
      seq: 5,
      epoch: 0,
      data: {},
    };
    const r = await ingest(env.AEP_SOCKET, ev);
    expect([r.status, JSON.parse(r.body).error]).toEqual([400, 'invalid-event']);
    const all = await replay(env.AEP_SOCKET, '&from=all');
    expect(all.events).toEqual([]);
    const health = JSON.parse((await httpCall({ socketPath: env.AEP_SOCKET }, { path: '/healthz' })).body);
    expect(health.stream.ingest.own_source_refused).toBe(1);
  });
});
