import { existsSync, mkdirSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyedSession, postHook, type KeyedHook } from '../support/hook-client.js';
import { decodeResourceSpans, type DecodedSpan } from '../support/otlp-json.js';
import { runShim, startDaemonProcess, tempDir, waitFor, type DaemonProcess } from '../support/processes.js';
import { fill, mountTmpfs, umount } from '../support/tmpfs.js';

/**
 * Spans leave only from what the history holds (issue 23, item 4): the span
 * context is assigned before the durable write, but the spans an event
 * finishes are exported by an after-durable consumer. The history lives on a
 * real, small tmpfs; the spans go to the file exporter OUTSIDE it.
 */

const TOOL_CALL_ID = 'gen_ai.tool.call.id';

/** every span the file exporter appended so far (one OTLP/JSON request per line), from every process */
function spansIn(file: string): DecodedSpan[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => decodeResourceSpans((JSON.parse(l) as { resourceSpans?: unknown[] }).resourceSpans));
}

const otelEnv = (spansFile: string) => ({ AEP_CAPTURE: 'full', OTEL_TRACES_EXPORTER: 'file', AEP_OTEL_FILE: spansFile, OTEL_BSP_SCHEDULE_DELAY: '50' });

/**
 * The mirror's counters once every span it finished is accounted for: exported, refused, given up, or waiting on
 * its event's write (a process that replayed no history: units closed by a replay are counted finished, never exported).
 */
async function otelSettled(d: DaemonProcess): Promise<Record<string, number>> {
  return waitFor('every finished span accounted for', async () => {
    const o = (await d.health()).sinks.otel as Record<string, number>;
    const accounted =
      o.spans_exported! + o.spans_failed! + o.spans_sampled_out! + o.spans_dropped_queue_full! + (o.spans_unwritten ?? 0) + (o.spans_awaiting_write ?? 0);
    return o.spans_queued === 0 && accounted === o.spans_finished ? o : undefined;
  });
}

function withTmpfsLog(prefix: string) {
  const base = tempDir(prefix);
  const dirs = { historyDir: path.join(base, 'log'), stateDir: path.join(base, 'state') };
  const state = { skip: undefined as string | undefined };
  beforeAll(() => {
    mkdirSync(dirs.historyDir);
    state.skip = mountTmpfs(dirs.historyDir, '4m');
    if (state.skip) console.log(`${prefix} skipped: ${state.skip}`);
  });
  afterAll(() => {
    if (!state.skip) umount(dirs.historyDir);
  });
  return { base, dirs, state, filler: path.join(dirs.historyDir, 'filler'), spansFile: path.join(base, 'spans.jsonl') };
}

describe('a hook whose durable write is lost exports no span', () => {
  const t = withTmpfsLog('hermes-aep-lostspan-');
  let daemon: DaemonProcess | undefined;
  afterAll(async () => {
    await daemon?.stop();
  });

  it('the tool call whose completion the full disk lost has no span; the next one, written, has its span', async (ctx) => {
    if (t.state.skip) return ctx.skip();
    daemon = await startDaemonProcess(otelEnv(t.spansFile), t.dirs);
    const d = daemon;
    // start, pre_llm_call, pre c0, post c0, pre c1, post c1, …
    const hooks = keyedSession('lost_0', 2, 1500);
    // post c0's event bigger than a page: its write cannot fit in what is left of the file's last page
    const big = JSON.parse(hooks[3]!.body) as { extra: Record<string, unknown> };
    big.extra.result = 'r'.repeat(64 * 1024);
    const postC0 = { ...hooks[3]!, body: JSON.stringify(big) };
    // a raw POST without a spool key: a failed write gives the hook up at once (answered 503), nothing holds it
    const post = (h: KeyedHook) => postHook(d.hookUrl, false, h.body, t.dirs.stateDir);
    for (const h of hooks.slice(0, 3)) expect((await post(h)).status).toBe(200);
    fill(t.filler);
    // post c0: processed (its span finished at stamp time), its write fails, given up
    expect((await post(postC0)).status).toBe(503);
    expect((await d.health()).hooks_lost).toBe(1);
    unlinkSync(t.filler);
    // the log takes writes again (its probe): a refused hook is not processed, so sending it again is safe
    await waitFor('pre c1 taken', async () => ((await post(hooks[4]!)).status === 200 ? true : undefined), 30_000);
    expect((await post(hooks[5]!)).status).toBe(200);
    // c1's span, finished after c0's, is exported: anything c0 had queued would be too
    await waitFor('the c1 tool span exported', () => (spansIn(t.spansFile).some((s) => s.attributes[TOOL_CALL_ID] === 'c1') ? true : undefined));
    const o = await otelSettled(d);
    expect(spansIn(t.spansFile).filter((s) => s.attributes[TOOL_CALL_ID] === 'c0')).toEqual([]);
    // where a user looks: the span is counted, not exported
    expect(o.spans_unwritten).toBe(1);
    expect(o.spans_awaiting_write).toBe(0);
  });
});

const SESSIONS = 4;
const CALLS = 3;
/** hooks per session before the disk fills (through pre c1), while it is full (post c1, pre c2, post c2); the rest after the restart */
const BEFORE = 5;
const DURING = 3;

describe('a full disk, the daemon killed during the outage, restarted with room: the spool re-delivery exports each span once', () => {
  const t = withTmpfsLog('hermes-aep-spoolspan-');
  let daemon: DaemonProcess | undefined;
  const sessions = Array.from({ length: SESSIONS }, (_, s) => keyedSession(`ss_${s}`, CALLS, 1500));
  afterAll(async () => {
    await daemon?.stop();
  });

  /** the real shim for hooks [from, to) of every session: sessions at once, each in order; every run answers `{}` */
  const shims = async (from: number, to: number) => {
    const outs = await Promise.all(
      sessions.map(async (hooks) => {
        const r: string[] = [];
        for (const h of hooks.slice(from, to)) r.push((await runShim(h.body, { ...daemon!.shimEnv, AEP_STATE_DIR: t.dirs.stateDir })).stdout);
        return r;
      }),
    );
    expect(outs.flat().every((o) => o === '{}')).toBe(true);
  };

  it('every span id occurs once across both processes, and every tool call and run has its span', async (ctx) => {
    if (t.state.skip) return ctx.skip();
    daemon = await startDaemonProcess(otelEnv(t.spansFile), t.dirs);
    await shims(0, BEFORE);
    fill(t.filler);
    // the first hook of each session now is a post_tool_call: those processed before the log refused are held in
    // memory (their spans finished at stamp time), answered 503, and spooled by the shim
    await shims(BEFORE, BEFORE + DURING);
    const h = await daemon.health();
    expect(h.hooks_retained).toBeGreaterThan(0);
    // whatever the first process would export has left before it dies
    await otelSettled(daemon);
    await daemon.kill();
    unlinkSync(t.filler);
    // the restart rebuilds the open units from the history and ingests the spool before it listens
    daemon = await startDaemonProcess(otelEnv(t.spansFile), t.dirs);
    await shims(BEFORE + DURING, sessions[0]!.length);
    await waitFor('spool empty', async () => ((await daemon!.health()).spool.pending === 0 ? true : undefined));
    expect(readdirSync(path.join(t.dirs.stateDir, 'spool')).filter((f) => f.endsWith('.hook'))).toEqual([]);
    // a graceful stop exports what is queued
    await daemon.stop();
    daemon = undefined;

    const spans = spansIn(t.spansFile);
    const byId = new Map<string, number>();
    for (const s of spans) byId.set(s.spanId, (byId.get(s.spanId) ?? 0) + 1);
    const twice = spans.filter((s) => byId.get(s.spanId)! > 1).map((s) => `${s.name} ${JSON.stringify(s.attributes[TOOL_CALL_ID] ?? null)} ${s.spanId}`);
    expect(twice).toEqual([]);
    // not vacuous: each session's three tool calls and its run, once each
    const tools = spans.filter((s) => s.attributes[TOOL_CALL_ID] !== undefined);
    expect(tools).toHaveLength(SESSIONS * CALLS);
    expect(spans.filter((s) => s.name.startsWith('invoke_agent'))).toHaveLength(SESSIONS);
  });
});
