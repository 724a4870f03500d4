import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startFakeLlm, text, toolCall, type FakeLlm } from './support/fake-llm.js';
import { makeHermesHome, runHermes, type HermesHome } from './support/hermes.js';
import { E2E_HERMES_VERSIONS } from './support/hermes-versions.js';
import { aepValidator } from '../support/aep-validator.js';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { startDaemonProcess, waitFor, type DaemonProcess } from '../support/processes.js';
import { readLogs, streamViolations } from '../support/stream-invariants.js';

/**
 * The same scripted session through both transports of the real Hermes: the shell hook (the shim, one process per
 * hook) and the plugin (`install --transport plugin`: the forwarder inside Hermes). Each gets its own daemon and
 * HERMES_HOME; the two AEP histories must be identical once what differs between ANY two runs is normalised (ids,
 * times, Hermes's own session ids and uuids, the temp paths), and so must the span trees.
 */
const SESSION: readonly (readonly string[])[] = [
  ['-z', 'MARK-TERMINAL run it'],
  ['-z', 'MARK-FAIL-READ read it'],
  ['-z', 'MARK-CLARIFY ask me'],
  ['chat', '-q', 'MARK-PLAIN first', '-Q'],
];

interface Run {
  daemon: DaemonProcess;
  receiver: OtlpReceiver;
  home: HermesHome;
  codes: number[];
}

/**
 * Run-specific values become placeholders numbered by first appearance (so equal values stay equal and different
 * ones stay different): Hermes session ids, uuids, turn suffixes, event ids (ULIDs), trace and span ids, times,
 * durations, temp paths. Applied to one run's whole history in one order, so both runs number alike when they match.
 * Content digests are NOT normalised: the same prompts and tool results must digest the same through both transports.
 */
function normaliser(): (s: string) => string {
  const seen = new Map<string, string>();
  const ph = (kind: string) => (v: string) => {
    const key = `${kind}:${v}`;
    if (!seen.has(key)) seen.set(key, `<${kind}${[...seen.keys()].filter((k) => k.startsWith(`${kind}:`)).length}>`);
    return seen.get(key)!;
  };
  return (s) =>
    s
      .replace(/\/tmp\/hermes-aep-[A-Za-z0-9-]+/g, '<tmp>')
      .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>')
      .replace(/\d{8}_\d{6}_[0-9a-f]{6}/g, ph('session'))
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, ph('uuid'))
      .replace(/(?<=>:)[0-9a-f]{8}\b/g, ph('turn'))
      .replace(/\b[0-9A-HJKMNP-TV-Z]{26}\b/g, ph('ulid'))
      .replace(/00-([0-9a-f]{32})-([0-9a-f]{16})-0([01])/g, (_m, t: string, sp: string, f: string) => `00-${ph('trace')(t)}-${ph('span')(sp)}-0${f}`)
      .replace(/"(traceId|spanId)":"([0-9a-f]+)"/g, (_m, k: string, v: string) => `"${k}":"${ph(k === 'traceId' ? 'trace' : 'span')(v)}"`)
      .replace(/"([a-z_.]*(?:_ms|duration|latency)[a-z_.]*)":\s*\d+(\.\d+)?/g, '"$1":<ms>');
}

/** The history as comparable lines: lanes in the order their first event was written, each event normalised. */
function history(run: Run): string[] {
  const lanes = [...readLogs(run.daemon.historyDir).values()].sort((a, b) => Date.parse(a[0]!.time as string) - Date.parse(b[0]!.time as string));
  const norm = normaliser();
  return lanes.flatMap((lane, i) => [`--- lane ${i}`, ...lane.map((e) => norm(JSON.stringify(e)))]);
}

/** The span trees: per trace (by root start), children in AEP sequence order, each span's depth, name, attributes, events and links, normalised. */
function spanTrees(spans: readonly ReceivedSpan[], norm = normaliser()): string[] {
  const byParent = new Map<string | undefined, ReceivedSpan[]>();
  const ids = new Set(spans.map((s) => s.spanId));
  for (const s of spans) {
    const p = s.parentSpanId && ids.has(s.parentSpanId) ? s.parentSpanId : undefined;
    byParent.set(p, [...(byParent.get(p) ?? []), s]);
  }
  const start = (s: ReceivedSpan) => BigInt(s.startTimeUnixNano);
  const byStart = (a: ReceivedSpan, b: ReceivedSpan) => (start(a) < start(b) ? -1 : start(a) > start(b) ? 1 : a.name.localeCompare(b.name));
  // siblings in the session's causal order (the AEP sequence of each span's first event), which both transports share;
  // start times do not order them alike: a chat span starts at Hermes's own clock, the others when the daemon received
  // the hook, which the plugin's background sender may do a few ms after the next model call began
  const firstSeq = (s: ReceivedSpan) => Math.min(...s.events.map((e) => Number(e.attributes['aep.sequence'] ?? Infinity)));
  const bySeq = (a: ReceivedSpan, b: ReceivedSpan) => firstSeq(a) - firstSeq(b) || byStart(a, b);
  const order = (list: ReceivedSpan[], roots = false) => [...list].sort(roots ? byStart : bySeq);
  const out: string[] = [];
  const walk = (s: ReceivedSpan, depth: number) => {
    const { name, attributes, events, links, status } = s;
    out.push(norm(`${'  '.repeat(depth)}${JSON.stringify({ name, attributes, events, links, status })}`));
    for (const c of order(byParent.get(s.spanId) ?? [])) walk(c, depth + 1);
  };
  for (const root of order(byParent.get(undefined) ?? [], true)) walk(root, 0);
  return out;
}

describe.each(E2E_HERMES_VERSIONS)('real Hermes %s: the shell transport and the plugin transport record the same session', (version) => {
  let llm: FakeLlm;
  const runs: Partial<Record<'shell' | 'plugin', Run>> = {};

  async function session(transport: 'shell' | 'plugin'): Promise<Run> {
    const receiver = new OtlpReceiver();
    await receiver.start();
    const daemon = await startDaemonProcess({ AEP_PORT: '', OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    const home = await makeHermesHome({
      modelUrl: llm.url,
      hookEnv: { AEP_STATE_DIR: daemon.stateDir },
      version,
      ...(transport === 'plugin' ? { installArgs: ['--transport', 'plugin'] } : {}),
    });
    const codes: number[] = [];
    for (const args of SESSION) codes.push((await runHermes(home, [...args])).code);
    await waitFor('daemon drained', async () => {
      const h = await daemon.health();
      return h.sinks.log.queued === 0 && h.sinks.otel.spans_queued === 0 ? true : undefined;
    });
    // every turn's root span has been exported (a turn is exported as it ends)
    const turns = [...readLogs(daemon.historyDir).values()].flat().filter((e) => e.type.startsWith('run.') && e.type !== 'run.started').length;
    await waitFor('turn spans exported', () => (receiver.spans.filter((s) => s.name === 'invoke_agent hermes').length >= turns ? true : undefined));
    return { daemon, receiver, home, codes };
  }

  beforeAll(async () => {
    llm = await startFakeLlm({
      steps: [
        { marker: 'MARK-TERMINAL', replies: [toolCall('terminal', { command: 'echo hello' }, 'call_pt_term')] },
        { marker: 'MARK-FAIL-READ', replies: [toolCall('read_file', { path: '/nonexistent/hermes-aep/missing.txt' }, 'call_pt_read')] },
        { marker: 'MARK-CLARIFY', replies: [toolCall('clarify', { question: 'Which colour?', choices: ['red', 'green', 'blue'] }, 'call_pt_clar')] },
        { marker: 'MARK-PLAIN', replies: [text('Plain answer.')] },
      ],
      auxiliaryReply: () => 'Fake session title',
    });
    runs.shell = await session('shell');
    runs.plugin = await session('plugin');
  }, 900_000);

  afterAll(async () => {
    for (const r of Object.values(runs)) {
      await r.daemon.stop();
      await r.receiver.stop();
    }
    await llm?.close();
  });

  it('the plugin run was the plugin: no shell hooks registered, the plugin directory in place; every Hermes process exited 0', () => {
    const { shell, plugin } = runs as Required<typeof runs>;
    expect(shell.codes).toEqual(SESSION.map(() => 0));
    expect(plugin.codes).toEqual(SESSION.map(() => 0));
    expect(existsSync(path.join(plugin.home.home, 'plugins', 'hermes-aep', '__init__.py'))).toBe(true);
    expect(existsSync(path.join(plugin.home.home, 'shell-hooks-allowlist.json'))).toBe(false);
    expect(existsSync(path.join(shell.home.home, 'plugins'))).toBe(false);
  });

  it('the two AEP histories are identical after normalising what differs between any two runs', () => {
    const { shell, plugin } = runs as Required<typeof runs>;
    const a = history(shell);
    expect(a.filter((l) => !l.startsWith('---')).length).toBeGreaterThan(20);
    expect(history(plugin)).toEqual(a);
  });

  it('the span trees match', () => {
    const { shell, plugin } = runs as Required<typeof runs>;
    const a = spanTrees(shell.receiver.spans);
    expect(a.length).toBeGreaterThan(5);
    expect(spanTrees(plugin.receiver.spans)).toEqual(a);
  });

  it('the plugin run passes the per-history checks: every event validates, every session log is sound, nothing dropped or spooled', async () => {
    const { plugin } = runs as Required<typeof runs>;
    const validate = aepValidator();
    for (const [file, lane] of readLogs(plugin.daemon.historyDir)) {
      for (const e of lane) expect(validate(e), `${file} ${e.type}`).toEqual([]);
      expect(streamViolations(lane, { requireCauses: true }), file).toEqual([]);
    }
    const h = await plugin.daemon.health();
    expect(h.transport.plugin).toEqual({ dropped: 0, reports: 0, refused: 0 });
    expect(h.spool).toMatchObject({ ingested: 0, dropped: 0 });
    expect(h.drift).toMatchObject({ missing: 0, mismatched: 0 });
  });
});
