import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSettings } from '../../../src/daemon/settings.js';
import { silentLogger } from '../../../src/core/logger.js';
import { startDaemon, type RunningDaemon } from '../../../src/daemon/main.js';
import { ROOT } from '../../support/paths.js';
import { httpCall, waitFor } from '../../support/processes.js';

/**
 * README, Security posture: "Files are 0600 in 0700 directories". The real daemon, in process, under the common
 * umask 022 (which would leave a plain create at 0644/0755): hooks over the socket, an ingest over TCP with
 * AEP_TOKEN, spans to the default file exporter; after a graceful stop, every entry of AEP_LOG_DIR and
 * AEP_STATE_DIR is walked.
 */
const HOOKS = readFileSync(path.join(ROOT, 'fixtures', 'hermes-recorded', 'raw', 'oneshot-dangerous-command.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean);
const TOKEN = 'file-modes-token-0123456789';

const running: RunningDaemon[] = [];
let umask: number | undefined;
afterEach(async () => {
  await Promise.all(running.splice(0).map((d) => d.close()));
  if (umask !== undefined) process.umask(umask);
  umask = undefined;
});

/** Every entry under `root` (itself included), with its permission bits. */
function walk(root: string): { path: string; kind: 'dir' | 'file' | 'socket' | 'other'; mode: number }[] {
  const out: { path: string; kind: 'dir' | 'file' | 'socket' | 'other'; mode: number }[] = [];
  const visit = (p: string) => {
    const st = lstatSync(p);
    const kind = st.isDirectory() ? 'dir' : st.isFile() ? 'file' : st.isSocket() ? 'socket' : 'other';
    out.push({ path: path.relative(path.dirname(root), p), kind, mode: st.mode & 0o777 });
    if (st.isDirectory()) for (const name of readdirSync(p)) visit(path.join(p, name));
  };
  visit(root);
  return out;
}

const octal = (m: number) => `0${m.toString(8)}`;

describe('the daemon’s files and directories under umask 022', () => {
  it('every file under AEP_LOG_DIR (hermes/, ingest/, otel/spans.jsonl) and AEP_STATE_DIR is 0600, every directory 0700', async () => {
    umask = process.umask(0o022);
    const root = mkdtempSync(path.join(os.tmpdir(), 'aep-file-modes-'));
    const env = {
      AEP_STATE_DIR: path.join(root, 'state'),
      AEP_LOG_DIR: path.join(root, 'logs'),
      AEP_PORT: '0',
      AEP_TOKEN: TOKEN,
      AEP_FSYNC_INTERVAL_MS: '0',
    };
    const d = await startDaemon(readSettings(env), silentLogger);
    running.push(d);
    const socketPath = d.socket!;
    // 503 while the history is still being opened (the shim would spool): poll with a deadline
    for (const h of HOOKS) {
      const r = await waitFor('the hook answered 200', async () => {
        const a = await httpCall({ socketPath }, { method: 'POST', path: '/hook', headers: { 'content-type': 'application/json' }, body: h });
        return a.status === 503 ? undefined : a;
      });
      expect(r.status).toBe(200);
    }
    const foreign = {
      aep: '0.1',
      id: 'ingested-1',
      type: 'session.started',
      time: '2026-07-03T10:14:00Z',
      source: 'aep://elsewhere/agent/other-agent/session/foreign-1',
      agent: 'other-agent',
      session: 'foreign-1',
      seq: 1,
      epoch: 1,
      data: {},
    };
    const ingested = await httpCall(
      { url: d.url! },
      {
        method: 'POST',
        path: '/events',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'aep-version': '0.1' },
        body: JSON.stringify(foreign),
      },
    );
    expect(ingested.status).toBe(202);
    // the graceful stop flushes the spans to the default file exporter and writes the snapshot
    await running.pop()!.close();

    const logs = walk(env.AEP_LOG_DIR);
    const state = walk(env.AEP_STATE_DIR);
    const files = [...logs, ...state].filter((e) => e.kind === 'file').map((e) => e.path);
    // what the promise covers is really there
    expect(files.filter((f) => f.startsWith(path.join('logs', 'hermes')) && f.endsWith('.jsonl')).length).toBeGreaterThan(0);
    expect(files).toContain(path.join('logs', 'ingest', 'other-agent', 'foreign-1.jsonl'));
    expect(files).toContain(path.join('logs', 'otel', 'spans.jsonl'));
    expect(existsSync(path.join(env.AEP_LOG_DIR, 'otel', 'spans.jsonl'))).toBe(true);
    expect(files).toEqual(expect.arrayContaining([path.join('state', 'epoch'), path.join('state', 'hook-token')]));

    const wrong = [...logs, ...state].filter((e) => e.mode !== (e.kind === 'dir' ? 0o700 : 0o600)).map((e) => `${e.kind} ${e.path} ${octal(e.mode)}`);
    expect(wrong).toEqual([]);
  });
});
