import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventKey, keyedSession, postHook, type KeyedHook } from '../support/hook-client.js';
import { SPOOL_KEY_HEADER } from '../../src/transport/spool-key.js';
import { startDaemonProcess, waitFor, type DaemonProcess } from '../support/processes.js';
import { safeFileName } from '../../src/history/safe-file-name.js';

const LIMIT = 128;
const SESSIONS = 300;
/** the second wave's connections, kept alive: with the pool's bound (a quarter of the limit) they all fit */
const CONNECTIONS = 40;

/** prlimit (util-linux) sets the daemon's RLIMIT_NOFILE; without it the test cannot run */
function prlimitMissing(): string | undefined {
  try {
    execFileSync('prlimit', ['--version'], { stdio: 'pipe' });
    return undefined;
  } catch {
    return 'prlimit (util-linux) is not installed';
  }
}

function keysByFile(dir: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  if (!existsSync(dir)) return out;
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.jsonl'))) {
    const keys = new Set<string>();
    for (const line of readFileSync(path.join(dir, f), 'utf8').split('\n')) if (line) keys.add(eventKey(JSON.parse(line) as Parameters<typeof eventKey>[0]));
    out.set(f, keys);
  }
  return out;
}

/** GET /healthz on a new connection; undefined while the daemon cannot accept one */
async function healthz(d: DaemonProcess): Promise<{ status: number; body: Record<string, any> } | undefined> {
  try {
    const r = await fetch(`${d.url}/healthz`, { signal: AbortSignal.timeout(2_000) });
    return { status: r.status, body: (await r.json()) as Record<string, any> };
  } catch {
    return undefined;
  }
}

let keys = 0;
/** a spool key in the shim's form (15-digit ms, 20-digit ns, pid, random) */
const nextKey = () => `${String(Date.now()).padStart(15, '0')}-${String(keys++).padStart(20, '0')}-${process.pid}-k${keys}`;

describe(`a daemon under RLIMIT_NOFILE=${LIMIT} with ${SESSIONS} sessions`, () => {
  const skip = prlimitMissing();
  let daemon: DaemonProcess | undefined;
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  afterAll(async () => {
    agent.destroy();
    await daemon?.stop();
  });

  it('every answered hook reaches its history file, nothing stays held, and /healthz answers afterwards', async (ctx) => {
    if (skip) return ctx.skip();
    daemon = await startDaemonProcess({ AEP_CAPTURE: 'full' }, undefined, ['prlimit', `--nofile=${LIMIT}:${LIMIT}`]);
    const replies = new Map<KeyedHook, number>();
    const drive = (prefix: string, via: Agent | false) =>
      Promise.all(
        Array.from({ length: SESSIONS }, (_, s) => keyedSession(`${prefix}_${s}`, 1)).map(async (hooks) => {
          // as the shim does: the key it would spool the hook under, sent first (a hook whose write fails is held, answered 503)
          for (const h of hooks) replies.set(h, (await postHook(daemon!.hookUrl, via, h.body, daemon!.stateDir, { [SPOOL_KEY_HEADER]: nextKey() })).status);
        }),
      );
    // the burst: every session at once, a connection per hook, far past the limit (connections refused, EMFILE on opens)
    await drive('burst', false);

    // reachable again once the load is gone, on a fresh connection (polled: no fixed wait)
    const h = await waitFor('/healthz answering', () => healthz(daemon!), 30_000, 100);
    // the hooks held in memory (retained) get written: the log drains to nothing held, nothing dropped
    const drained = await waitFor(
      'the log holding nothing',
      async () => {
        const r = await healthz(daemon!);
        const log = r?.body.sinks?.log as Record<string, number> | undefined;
        return log && log.retained === 0 && log.queued === 0 ? r : undefined;
      },
      30_000,
      100,
    );
    expect(h.status).toBeGreaterThan(0);
    expect(drained.body.sinks.log).toMatchObject({ dropped: 0, retained: 0, queued: 0 });
    expect(drained.body).toMatchObject({ ok: true, status: 'ok' });
    // the bound the pool took from the limit: a quarter of it
    expect(drained.body.sinks.log.open_files).toBeLessThanOrEqual(LIMIT / 4);

    const files = keysByFile(path.join(daemon.historyDir, 'hermes'));
    const answered = [...replies].filter(([, s]) => s === 200).map(([hook]) => hook);
    const missing = answered.filter((hook) => !files.get(`${safeFileName(hook.session)}.jsonl`)?.has(hook.key)).map((hook) => `${hook.session} ${hook.key}`);
    expect(missing).toEqual([]);
    expect(answered.length).toBeGreaterThan(0);

    // not wedged: a second wave over kept-alive connections is answered and written whole
    const before = replies.size;
    await drive('wave', agent);
    const wave = [...replies].slice(before);
    expect(wave.filter(([, s]) => s !== 200).length).toBe(0);
    const after = keysByFile(path.join(daemon.historyDir, 'hermes'));
    expect(wave.filter(([hook]) => !after.get(`${safeFileName(hook.session)}.jsonl`)?.has(hook.key)).map(([hook]) => hook.key)).toEqual([]);
    expect(await waitFor('/healthz ok', async () => ((await healthz(daemon!))?.status === 200 ? true : undefined), 30_000, 100)).toBe(true);
  });
});
