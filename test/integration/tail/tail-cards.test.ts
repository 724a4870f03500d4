// tail with cards end to end: over a small SSE server, a card line carries its id and time left, the footer
// is drawn on the terminal and erased when the outcome arrives; never with --json; and as a process on a pipe
// (no terminal) the card line is there but no footer byte is.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { plainStyler } from '../../../src/tail/color.js';
import { ERASE } from '../../../src/tail/footer.js';
import { compileLocalFilter } from '../../../src/tail/local-filter.js';
import type { TailPlan } from '../../../src/tail/options.js';
import { runTail } from '../../../src/tail/tail.js';
import { CLI } from '../../support/paths.js';
import { tempDir, waitFor } from '../../support/processes.js';
import { CARD, cardEvent, outcome } from '../../support/card-events.js';

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

/** An SSE stream on a Unix socket: `push` writes one event to the open response. */
async function stream(): Promise<{ path: string; push: (e: Record<string, unknown>) => void; opened: () => boolean }> {
  let res: ServerResponse | undefined;
  const server = createServer((_req, r) => {
    r.writeHead(200, { 'content-type': 'text/event-stream' });
    r.write(': hello\n\n');
    res = r;
  });
  const where = path.join(tempDir(), 's.sock');
  await new Promise<void>((r) => server.listen(where, r));
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { path: where, push: (e) => void res?.write(`data: ${JSON.stringify(e)}\n\n`), opened: () => res !== undefined };
}

function plan(p: string, json: boolean): TailPlan {
  const f = compileLocalFilter({});
  if ('error' in f) throw new Error(f.error);
  return { target: { kind: 'socket', path: p }, historyRoot: tempDir(), localFilter: f.filter, json, follow: true };
}

describe('tail: cards over the stream', () => {
  it('the card line has the full id and time left; the footer lists it until the outcome, then is erased', async () => {
    const s = await stream();
    const out: string[] = [];
    const screen: string[] = [];
    const stop = new AbortController();
    closers.push(() => stop.abort());
    const now = () => Date.parse('2026-07-03T10:04:18.000Z');
    const done = runTail(
      plan(s.path, false),
      {
        out: (l) => (out.push(l), screen.push(`${l}\n`)),
        err: () => undefined,
        style: plainStyler,
        terminal: { write: (t) => screen.push(t), columns: () => 100 },
      },
      stop.signal,
      { now },
    );
    await waitFor('the stream to open', () => s.opened() || undefined);
    s.push(cardEvent());
    await waitFor('the footer', () => screen.includes(`${ERASE}1 pending: ${CARD} 42s left`) || undefined);
    expect(out[0]).toMatch(new RegExp(`card=${CARD} 42s left$`));
    s.push(outcome('attention.timeout', CARD, { after_ms: 300_000 }));
    await waitFor('the outcome line', () => out[1]);
    expect(out[1]).toMatch(/attention\.timeout .* → timed out$/);
    expect(screen.slice(-2)).toEqual([ERASE, `${out[1]}\n`]);
    stop.abort();
    await expect(done).resolves.toBe(0);
  });

  it('--json: the lines untouched, the terminal never written', async () => {
    const s = await stream();
    const out: string[] = [];
    const screen: string[] = [];
    const stop = new AbortController();
    closers.push(() => stop.abort());
    const done = runTail(
      plan(s.path, true),
      { out: (l) => out.push(l), err: () => undefined, style: plainStyler, terminal: { write: (t) => screen.push(t), columns: () => 100 } },
      stop.signal,
    );
    await waitFor('the stream to open', () => s.opened() || undefined);
    const c = cardEvent();
    s.push(c);
    await waitFor('the line', () => out[0]);
    expect(out).toEqual([JSON.stringify(c)]);
    stop.abort();
    await done;
    expect(screen).toEqual([]);
  });

  it('a process on a pipe: the card line (full id, expired for a past expiry), no footer control bytes', async () => {
    const state = tempDir();
    const logs = path.join(state, 'logs');
    mkdirSync(path.join(logs, 'hermes'), { recursive: true });
    writeFileSync(path.join(logs, 'hermes', 's1.jsonl'), `${JSON.stringify(cardEvent(CARD, {}, { expires_at: '2020-01-01T00:00:00Z' }))}\n`);
    const r = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, 'tail', '--no-follow'], {
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '', AEP_STATE_DIR: state, AEP_LOG_DIR: logs },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      let stdout = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
      child.once('exit', (code) => resolve({ code, stdout }));
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`attention\\.requested terminal .*card=${CARD} expired\\n$`));
    expect(r.stdout).not.toContain('\u001b');
  });
});
