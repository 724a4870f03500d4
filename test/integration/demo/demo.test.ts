// `hermes-aep demo` as a user runs it: the built CLI, the shipped shim, a real daemon (one the test started, or
// the one the demo starts itself), and what it leaves behind: the history, the spans file, no daemon.
import { spawn } from 'node:child_process';
import { chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { aepValidator } from '../../support/aep-validator.js';
import { historyEvents } from '../../support/history-lines.js';
import { decodeResourceSpans } from '../../support/otlp-json.js';
import { CLI } from '../../support/paths.js';
import { OtlpReceiver } from '../../support/otlp-receiver.js';
import { freePort } from '../../support/ports.js';
import { startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../../support/processes.js';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** Processes a test started and a failing assertion would leave running: killed after each test. */
const strays = new Set<number>();

/** The built CLI with `args`, only the given AEP/OTEL settings (none of the runner's), no colors; killed after 60 s. */
function cli(args: readonly string[], env: Record<string, string>): Promise<Run> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AEP_') && !k.startsWith('OTEL_') && k !== 'FORCE_COLOR'));
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...base, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    strays.add(child.pid!);
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (code) => {
      strays.delete(child.pid!);
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - t0 });
    });
  });
}

/** Every AEP type of the scripted session, in order: nothing more, nothing less. */
const EXPECTED = [
  'session.started',
  'run.started',
  'x.hermes.model.call',
  'tool.requested',
  'tool.completed',
  'tool.requested',
  'tool.failed',
  'x.hermes.model.call',
  'tool.requested',
  'attention.requested',
  'attention.answered',
  'attention.resolved',
  'tool.completed',
  'x.hermes.model.call',
  'tool.requested',
  'attention.requested',
  'tool.completed',
  'attention.answered',
  'attention.resolved',
  'x.hermes.model.call',
  'run.finished',
  'session.ended',
];

/** The demo's output and what it left on disk, checked against each other. */
function checkDemo(run: Run, logDir: string) {
  const session = /^Session: (\S+) /m.exec(run.stdout)?.[1];
  expect(session).toMatch(/^demo-\d{8}_\d{6}_[0-9a-f]{6}$/);
  const events = historyEvents(path.join(logDir, 'hermes')).filter((e) => e['session'] === session);
  expect(events.map((e) => e['type'])).toEqual(EXPECTED);
  const validate = aepValidator();
  for (const e of events) expect(validate(e), String(e['type'])).toEqual([]);
  // the failing tool, the observed approval (allowed once), the clarify (a form card, answered), tokens on the run
  expect(events.find((e) => e['type'] === 'tool.failed')?.['subject']).toBe('read_file');
  const cards = events.filter((e) => e['type'] === 'attention.requested').map((e) => e['data']['kind']);
  expect(cards).toEqual(['permission', 'form']);
  expect(events.find((e) => e['type'] === 'attention.answered')?.['data']['answer']['option']).toBe('once');
  const finished = events.find((e) => e['type'] === 'run.finished')!;
  expect(finished['data']['gen_ai.usage.input_tokens']).toBe(420 + 610 + 700 + 820);
  expect(events.at(-1)!['data']['reason']).toBe('normal');

  const historyFile = path.join(logDir, 'hermes', `${session}.jsonl`);
  expect(run.stdout).toContain(`History: ${historyFile} (${EXPECTED.length} events)`);
  // the tail view: one rendered line per event, between its heading and the blank line
  const view = run.stdout.split('shows for it:\n')[1]!.split('\n\n')[0]!.split('\n');
  expect(view).toHaveLength(EXPECTED.length);
  expect(view[0]).toContain('session.started client=hermes');

  const traceId = /^00-([0-9a-f]{32})-/.exec(String(events[1]!['traceparent']))?.[1];
  expect(traceId).toMatch(/^[0-9a-f]{32}$/);
  expect(run.stdout).toContain(`Trace:   ${traceId}`);
  expect(run.stdout).toContain(`Jaeger:  http://127.0.0.1:16686/trace/${traceId}`);
  const spansFile = path.join(logDir, 'otel', 'spans.jsonl');
  const spans = readFileSync(spansFile, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .flatMap((l) => decodeResourceSpans((JSON.parse(l) as { resourceSpans: any[] }).resourceSpans))
    .filter((s) => s.traceId === traceId);
  // the turn, its four model calls, its four tools, the two cards
  expect(spans.map((s) => s.name).sort()).toEqual([
    'attention form',
    'attention permission',
    'chat demo-model',
    'chat demo-model',
    'chat demo-model',
    'chat demo-model',
    'execute_tool clarify',
    'execute_tool read_file',
    'execute_tool terminal',
    'execute_tool terminal',
    'invoke_agent hermes',
  ]);
  expect(run.stdout).toContain(`Spans:   ${spansFile} (${spans.length} spans of this trace, OTLP/JSON)`);
  expect(run.stdout).toContain(`Again:   hermes-aep tail --session ${session} --no-follow`);
  return { session: session!, view };
}

const daemons: DaemonProcess[] = [];
afterEach(async () => {
  await Promise.all(daemons.splice(0).map((d) => d.stop()));
  for (const pid of strays) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone already */
    }
  }
  strays.clear();
});

describe('hermes-aep demo', () => {
  it('into the running daemon: every expected event in the history, AEP-valid, the trace in the spans file, through the real shim', async () => {
    const d = await startDaemonProcess({ AEP_PORT: '', OTEL_TRACES_EXPORTER: 'file' });
    daemons.push(d);
    const hooksBefore = (await d.health())['hooks'] as number;
    const run = await cli(['demo'], { AEP_STATE_DIR: d.stateDir, AEP_LOG_DIR: d.historyDir });
    console.log(`demo into a running daemon: ${run.ms.toFixed(0)} ms`);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Daemon: the one running at unix:${d.socketPath}`);
    // eighteen hooks, each one shim process, all taken by this daemon
    expect(((await d.health())['hooks'] as number) - hooksBefore).toBe(18);
    checkDemo(run, d.historyDir);
    expect(d.child.exitCode).toBeNull();
  });

  it('no daemon running: it starts one with the same settings, and leaves none behind; the view is what tail prints', async () => {
    const base = tempDir();
    const env = { AEP_STATE_DIR: path.join(base, 'state'), AEP_LOG_DIR: path.join(base, 'log') };
    const run = await cli(['demo'], env);
    console.log(`demo with its own daemon: ${run.ms.toFixed(0)} ms`);
    const pid = Number(/so the demo started one \(pid (\d+), same settings\)/.exec(run.stdout)?.[1]);
    if (pid > 0) strays.add(pid);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(pid).toBeGreaterThan(0);
    expect(run.stdout).toContain(`Stopped the daemon the demo started (pid ${pid}, exit 0)`);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    const { session, view } = checkDemo(run, env.AEP_LOG_DIR);
    // the command it prints shows the same lines (no daemon now: tail reads the history)
    const again = await cli(['tail', '--session', session, '--no-follow'], env);
    expect(again.code).toBe(0);
    expect(again.stdout.trimEnd().split('\n')).toEqual(view);
  }, 90_000);

  it('spans to a collector: the trace id, that the collector took it, and the Jaeger link at --jaeger-url', async () => {
    const receiver = await new OtlpReceiver().start();
    try {
      const d = await startDaemonProcess({ AEP_PORT: '', OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
      daemons.push(d);
      const run = await cli(['demo', '--jaeger-url', 'http://jaeger.example:16686/'], { AEP_STATE_DIR: d.stateDir, AEP_LOG_DIR: d.historyDir });
      console.log(`demo exporting to a collector: ${run.ms.toFixed(0)} ms`);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const traceId = /^Trace: {3}([0-9a-f]{32}): exported to the collector \(OTEL_EXPORTER_OTLP_ENDPOINT\)$/m.exec(run.stdout)?.[1];
      expect(traceId).toBeDefined();
      expect(run.stdout).toContain(`Jaeger:  http://jaeger.example:16686/trace/${traceId}\n`);
      expect(receiver.spans.filter((s) => s.traceId === traceId).length).toBe(11);
      expect(run.stdout).not.toContain('Spans:');
    } finally {
      await receiver.stop();
    }
  });

  it('--help says what it sends and lists --jaeger-url; a bad --jaeger-url is refused before anything runs', async () => {
    const help = await cli(['demo', '--help'], {});
    expect(help.code).toBe(0);
    for (const s of ['--jaeger-url', 'http://127.0.0.1:16686', 'clarify', 'approval', 'Exit status']) expect(help.stdout).toContain(s);
    const base = tempDir();
    const bad = await cli(['demo', '--jaeger-url', 'ftp://example'], { AEP_STATE_DIR: path.join(base, 'state'), AEP_LOG_DIR: path.join(base, 'log') });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('hermes-aep demo: --jaeger-url takes an http:// or https:// URL\n');
    expect(bad.stdout).toBe('');
  });

  it('a daemon that refuses the hook token: exit 1, one line naming the refusal, nothing recorded', async () => {
    const d = await startDaemonProcess({ AEP_SOCKET: 'off' });
    daemons.push(d);
    const wrong = path.join(tempDir(), 'hook-token');
    writeFileSync(wrong, `${'0f'.repeat(32)}\n`, { mode: 0o600 });
    const port = new URL(d.url).port;
    const run = await cli(['demo'], { AEP_SOCKET: 'off', AEP_HOST: '127.0.0.1', AEP_PORT: port, AEP_TOKEN_FILE: wrong, AEP_LOG_DIR: d.historyDir });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`hermes-aep demo: the daemon at http://127.0.0.1:${port} refused the hooks' token (401): ${wrong} does not hold its hook token\n`);
    expect(historyEvents(path.join(d.historyDir, 'hermes')).filter((e) => String(e['session']).startsWith('demo-'))).toEqual([]);
  });

  it('a daemon that refused to start (AEP_START_REFUSED=serve): exit 1 with its reason, no hook sent, no daemon started', async () => {
    const base = tempDir();
    const stateDir = path.join(base, 'state');
    mkdirSync(stateDir, { mode: 0o700 });
    // a state dir owned by another uid: the daemon refuses its start and serves why (the tests run as root)
    chownSync(stateDir, 65534, 65534);
    const port = String(await freePort());
    const env = { AEP_HOST: '127.0.0.1', AEP_PORT: port, AEP_SOCKET: 'off', AEP_STATE_DIR: stateDir, AEP_LOG_DIR: path.join(base, 'log') };
    const refused = spawn(process.execPath, [CLI, 'daemon'], {
      env: { ...process.env, ...env, OTEL_TRACES_EXPORTER: 'none', AEP_START_REFUSED: 'serve' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise((r) => refused.once('exit', r));
    let err = '';
    refused.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    try {
      await waitFor('the refusal being served', () => err.includes('refused to start; serving'), 20_000);
      const run = await cli(['demo'], env);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        new RegExp(
          `^hermes-aep demo: the daemon at http://127\\.0\\.0\\.1:${port} does not take hooks: it refused to start \\(AEP_STATE_DIR: .*owned by uid 65534.*\\)\\n$`,
        ),
      );
      expect(run.stdout).not.toContain('Sending:');
      expect(run.stdout).not.toContain('started one');
    } finally {
      refused.kill('SIGTERM');
      await exited;
    }
  });
});
