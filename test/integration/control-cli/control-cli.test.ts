// `hermes-aep answer` / `instruct` as processes against a small in-test collector: the card looked up in what
// is held, the accepted path with its outcome, --json printing the lines as received, and the exit codes
// (0 accepted, 1 rejected/refused, 2 usage, connection, card not found). The token is never printed.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI } from '../../support/paths.js';
import { tempDir } from '../../support/processes.js';
import { FakeCollector } from '../../support/fake-collector.js';

const TOKEN = 'control-cli-token-0123456789';
const CARD = '01JZCARD000000000000000000';
const SESSION = '20261201_015107_962745';

function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const state = tempDir();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, AEP_STATE_DIR: state, AEP_LOG_DIR: path.join(state, 'log'), AEP_TOKEN: '', NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const card = (over: Record<string, unknown> = {}) => ({
  aep: '0.1',
  id: CARD,
  type: 'attention.requested',
  time: '2026-07-03T10:00:00Z',
  source: `aep://h/agent/hermes/session/${SESSION}`,
  agent: 'hermes',
  session: SESSION,
  seq: 7,
  severity: 'notice',
  data: {
    kind: 'permission',
    prompt: 'hermes requests permission: terminal',
    options: [
      { id: 'allow', label: 'allow' },
      { id: 'deny', label: 'deny' },
    ],
    respond_via: ['control'],
    expires_at: '2099-01-01T00:00:00Z',
  },
  ...over,
});

let collector: FakeCollector | undefined;
afterEach(async () => {
  await collector?.close();
  collector = undefined;
});

async function tcpCollector(): Promise<FakeCollector & { where: { kind: 'url'; url: string } }> {
  collector = await FakeCollector.start('tcp');
  collector.token = TOKEN;
  collector.held = [card()];
  return collector as FakeCollector & { where: { kind: 'url'; url: string } };
}

describe('hermes-aep answer / instruct (process)', () => {
  it('answer: the card found in what the daemon holds, accepted, then how it ended; exit 0; the token never printed', async () => {
    const c = await tcpCollector();
    c.onCommand = (x) => {
      x.event('control.accepted', { cause: x.command.id });
      x.event('attention.answered', { subject: CARD, cause: x.command.id, data: { answer: { option: 'deny', text: 'not on prod' }, via: 'control' } });
    };
    const r = await run(['answer', '--url', c.where.url, CARD, 'deny', 'not', 'on', 'prod'], { AEP_TOKEN: TOKEN });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, 'accepted\nanswered: deny "not on prod"\n', '']);
    // the lookup: replay only, filtered on the card's type and id
    const q = new URL(c.streamRequests[0]!.url!, 'http://x').searchParams;
    expect([q.get('from'), q.get('live'), JSON.parse(q.get('filter')!)]).toEqual(['all', '0', { type: 'attention.requested', id: CARD }]);
    const sent = JSON.parse(c.commands[0]!);
    expect(sent).toMatchObject({
      type: 'control.attention.respond',
      session: SESSION,
      subject: CARD,
      cause: CARD,
      data: { answer: { option: 'deny', text: 'not on prod' } },
    });
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });

  it('--json: the ack and the outcome lines exactly as received', async () => {
    const c = await tcpCollector();
    const lines: string[] = [];
    c.onCommand = (x) => {
      lines.push(x.event('control.accepted', { cause: x.command.id, data: {} }));
      lines.push(x.event('attention.resolved', { subject: CARD, data: { resolution: 'answered', latency_ms: 12 } }));
    };
    const r = await run(['answer', '--json', '--url', c.where.url, '--token', TOKEN, CARD, 'allow']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${lines.join('\n')}\n`);
  });

  it('--session skips the lookup; a rejection exits 1', async () => {
    const c = await tcpCollector();
    c.held = [];
    c.onCommand = (x) => x.event('control.rejected', { cause: x.command.id, data: { reason: 'refused', detail: 'the card was already answered' } });
    const r = await run(['answer', '--url', c.where.url, '--session', 'other-session', CARD, 'allow'], { AEP_TOKEN: TOKEN });
    expect([r.code, r.stdout]).toEqual([1, 'rejected: refused (the card was already answered)\n']);
    expect(c.streamRequests).toHaveLength(0);
    expect(JSON.parse(c.commands[0]!).session).toBe('other-session');
  });

  it('instruct over the Unix socket (no token): accepted; a refusal error frame exits 1', async () => {
    collector = await FakeCollector.start('socket');
    const sock = collector.where.kind === 'socket' ? collector.where.path : '';
    collector.onCommand = (x) =>
      x.n === 1
        ? x.event('control.accepted', { cause: x.command.id })
        : x.conn.ws.send(JSON.stringify({ type: 'error', cause: x.command.id, code: 'no-route', detail: 'nobody' }));
    const ok = await run(['instruct', '--socket', sock, SESSION, 'run', 'the', 'tests', 'first']);
    expect([ok.code, ok.stdout]).toEqual([0, 'accepted\n']);
    expect(JSON.parse(collector.commands[0]!)).toMatchObject({ type: 'x.hermes.control.instruct', session: SESSION, data: { text: 'run the tests first' } });
    expect(collector.conns[0]!.headers.authorization).toBeUndefined();
    const refused = await run(['instruct', '--socket', sock, SESSION, 'again']);
    expect([refused.code, refused.stdout]).toEqual([1, 'refused: no-route (nobody)\n']);
  });

  it('a card the daemon does not hold, or one observed only (respond_via oob), or lacking the option: exit 2, nothing sent', async () => {
    const c = await tcpCollector();
    const env = { AEP_TOKEN: TOKEN };
    const missing = await run(['answer', '--url', c.where.url, '01JZNOPE000000000000000000', 'deny'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no card 01JZNOPE000000000000000000 among the events the daemon holds');
    c.held = [card({ data: { kind: 'permission', prompt: 'PLANTED prompt', respond_via: ['oob'] } })];
    const oob = await run(['answer', '--url', c.where.url, CARD, 'deny'], env);
    expect(oob.code).toBe(2);
    expect(oob.stderr).toContain('is observed only');
    expect(oob.stderr).not.toContain('PLANTED');
    c.held = [card({ data: { kind: 'permission', prompt: 'p', options: [{ id: 'once', label: 'x' }], respond_via: ['control'] } })];
    const option = await run(['answer', '--url', c.where.url, CARD, 'allow'], env);
    expect([option.code, option.stderr]).toEqual([2, `hermes-aep answer: card ${CARD} does not offer allow\n`]);
    expect(c.commands).toHaveLength(0);
  });

  it('usage errors exit 2: a bad decision, a reason with allow, a missing argument, TCP without a token', async () => {
    const bad = await run(['answer', CARD, 'maybe']);
    expect([bad.code, bad.stderr]).toEqual([2, 'hermes-aep answer: the second word must be allow or deny\n']);
    const allowWhy = await run(['answer', CARD, 'allow', 'because']);
    expect(allowWhy.code).toBe(2);
    expect(allowWhy.stderr).toContain('a reason goes only with deny');
    const missing = await run(['instruct', 'only-a-session']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing required argument 'text'");
    const noToken = await run(['instruct', '--url', 'http://127.0.0.1:9', 's', 'hi']);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('needs the stream token: set AEP_TOKEN');
  });

  it('no daemon: exit 2, saying where it looked', async () => {
    const r = await run(['instruct', '--socket', '/nonexistent/hook.sock', 's', 'hi']);
    expect([r.code, r.stderr]).toEqual([2, 'hermes-aep instruct: cannot reach unix:/nonexistent/hook.sock (ENOENT)\n']);
  });

  it('--help lists the options and the environment', async () => {
    for (const cmd of ['answer', 'instruct']) {
      const r = await run([cmd, '--help']);
      expect(r.code).toBe(0);
      for (const o of ['--url', '--socket', '--token', '--json', 'AEP_TOKEN', 'AEP_SOCKET', 'AEP_STATE_DIR']) expect(r.stdout).toContain(o);
    }
    expect((await run(['answer', '--help'])).stdout).toContain('--session');
  });
});
