import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ROOT } from '../support/paths.js';
import { httpCall, startDaemonProcess, type DaemonProcess } from '../support/processes.js';

const run = promisify(execFile);
const TOKEN = 'tail-daemon-token-0123456789';
const GOLDEN_TEXT = readFileSync(path.join(ROOT, 'fixtures', 'aep', 'golden', 'golden.jsonl'), 'utf8');
const GOLDEN = GOLDEN_TEXT.split('\n').filter(Boolean);

/** `hermes-aep tail` against the real daemon: what the stream holds, over the Unix socket (no token) and TCP. */
describe('hermes-aep tail on a running daemon', () => {
  let d: DaemonProcess;
  beforeAll(async () => {
    d = await startDaemonProcess({ AEP_TOKEN: TOKEN });
    const r = await httpCall(
      { url: d.url },
      {
        method: 'POST',
        path: '/events',
        headers: { authorization: `Bearer ${TOKEN}`, 'aep-version': '0.1', 'content-type': 'application/x-ndjson' },
        body: GOLDEN_TEXT,
      },
    );
    expect(r.status).toBe(202);
  });
  afterAll(async () => {
    await d?.stop();
  });

  const tail = (args: string[], env: Record<string, string> = {}) =>
    run(process.execPath, [CLI, 'tail', '--no-follow', ...args], {
      env: { ...process.env, AEP_STATE_DIR: d.stateDir, NO_COLOR: '1', ...env },
      timeout: 20_000,
    });

  it('--json prints every held event exactly as the stream carries it (the socket, no token needed)', async () => {
    const { stdout } = await tail(['--json']);
    expect(stdout.split('\n').filter(Boolean)).toEqual(GOLDEN);
  });

  it('over TCP with the token, filtered by type: one line per matching event, the token never printed', async () => {
    const { stdout, stderr } = await tail(['--url', d.url, '--type', 'tool.*'], { AEP_TOKEN: TOKEN });
    const lines = stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(GOLDEN.filter((l) => (JSON.parse(l) as { type: string }).type.startsWith('tool.')).length);
    for (const l of lines) expect(l).toMatch(/ tool\.(requested|completed|failed|denied) /);
    expect(stdout + stderr).not.toContain(TOKEN);
  });
});
