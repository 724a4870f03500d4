import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { readSettings } from '../../../src/daemon/settings.js';
import { silentLogger } from '../../../src/core/logger.js';
import { startDaemon, type RunningDaemon } from '../../../src/daemon/main.js';
import { streamTarget } from '../../../src/tail/target.js';
import { httpCall } from '../../support/processes.js';

const running: RunningDaemon[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((d) => d.close()));
});

function tcpEnv(extra: Record<string, string> = {}): Record<string, string> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'aep-read-token-'));
  return {
    AEP_STATE_DIR: path.join(root, 'state'),
    AEP_LOG_DIR: path.join(root, 'logs'),
    AEP_SOCKET: 'off',
    AEP_PORT: '0',
    AEP_FSYNC_INTERVAL_MS: '0',
    ...extra,
  };
}

async function start(env: Record<string, string>) {
  const d = await startDaemon(readSettings(env), silentLogger);
  running.push(d);
  const hookToken = readFileSync(path.join(env['AEP_STATE_DIR']!, 'hook-token'), 'utf8').trim();
  return { url: d.url!, hookToken };
}

const get = (url: string, headers: Record<string, string> = {}) => httpCall({ url }, { path: '/stream?live=0', headers });

describe('reading the stream over TCP without AEP_TOKEN', () => {
  it('is refused by default (approval prompts ride the stream); the hook token reads, and cannot ingest', async () => {
    const { url, hookToken } = await start(tcpEnv());
    const anon = await get(url);
    expect(anon.status).toBe(401);
    expect(anon.body).not.toContain(hookToken);
    expect((await get(url, { authorization: `Bearer ${'0'.repeat(64)}` })).status).toBe(401);
    expect((await get(url, { authorization: `Bearer ${hookToken}` })).status).toBe(200);
    const ingest = await httpCall(
      { url },
      {
        method: 'POST',
        path: '/events',
        headers: { authorization: `Bearer ${hookToken}`, 'aep-version': '0.1', 'content-type': 'application/x-ndjson' },
        body: '{}\n',
      },
    );
    expect(ingest.status).toBe(401);
  });

  it('AEP_STREAM_READ=open lets anyone on the host watch, as before', async () => {
    const { url } = await start(tcpEnv({ AEP_STREAM_READ: 'open' }));
    expect((await get(url)).status).toBe(200);
  });

  it('the CLI reads with the local hook token when no AEP_TOKEN is set, and sends it to loopback only', async () => {
    const env = tcpEnv();
    const { hookToken } = await start(env);
    const config = loadConfig(env);
    const tokenOf = (t: ReturnType<typeof streamTarget>) => (t.kind === 'url' ? (t.token ?? 'none') : 'socket');
    expect(tokenOf(streamTarget({ url: 'http://127.0.0.1:8393' }, config))).toBe(hookToken);
    expect(tokenOf(streamTarget({ url: 'http://[::1]:8393' }, config))).toBe(hookToken);
    expect(tokenOf(streamTarget({ url: 'http://observer.example:8393' }, config))).toBe('none');
    // a command never borrows it: commands need AEP_TOKEN
    expect(tokenOf(streamTarget({ url: 'http://127.0.0.1:8393' }, config, false))).toBe('none');
  });
});
