/**
 * `hermes-aep tail`: attach to the daemon's `GET /stream` (AEP-0003 §3.3),
 * resuming after a daemon restart from the last positions shown; when no
 * daemon answers, read and follow the JSONL history instead (AEP-0003 §3.1),
 * applying the filter, the resume point and the capture ceiling itself.
 */
import path from 'node:path';
import { downlevel } from '../capture/downlevel.js';
import type { CaptureEvent } from '../capture/types.js';
import { decodeObject, HistoryFollower, safeFileName } from '../history/index.js';
import { comparePosition, type Position } from '../aep/wire.js';
import { PendingCards } from './cards.js';
import type { Styler } from './color.js';
import { Footer, type Terminal } from './footer.js';
import type { TailPlan } from './options.js';
import { Printer } from './printer.js';
import { RecentWindow, timeKey } from './recent.js';
import { renderNotice } from './render.js';
import { describeTarget, followStream, type StreamQuery } from './sse-client.js';

export interface TailIo {
  readonly out: (line: string) => void;
  /** notices about the stream itself (never event content) */
  readonly err: (line: string) => void;
  readonly style: Styler;
  /** stdout when it is a terminal (and not `--json`): the pending-cards footer is drawn there */
  readonly terminal?: Terminal;
}

export interface TailTuning {
  readonly idleMs?: number;
  readonly backoffMs?: { readonly min: number; readonly max: number };
  readonly rescanMs?: number;
  /** the clock cards' time left is computed with */
  readonly now?: () => number;
  /** the footer's refresh period (default 1 s) */
  readonly footerTickMs?: number;
}

/** No daemon there: the history is the next best source. */
const UNREACHABLE = new Set(['ENOENT', 'ECONNREFUSED', 'ENOTSOCK', 'ECONNRESET', 'EHOSTUNREACH']);

function comment(text: string, io: TailIo): void {
  const exhausted = /^replay-exhausted (.+) (\d+):(\d+)$/.exec(text);
  if (exhausted) io.err(renderNotice(`session ${exhausted[1]}: replay starts at ${exhausted[2]}:${exhausted[3]}, earlier events are no longer held`, io.style));
  else if (text.startsWith('closing')) io.err(renderNotice(`the daemon closed the stream (${text.slice(7).trim() || 'no reason'})`, io.style));
}

/** The recent-context window of one source, when the plan asks for one. */
function windowOf(plan: TailPlan, printer: Printer, key?: (event: Readonly<Record<string, unknown>>) => number): RecentWindow | undefined {
  return plan.recent !== undefined && plan.from === 'all' ? new RecentWindow(plan.recent, printer, key) : undefined;
}

/** The daemon's SSE comment after a live subscription's replay (sse-sink.ts): the recent context is complete. */
const REPLAYED = 'replayed';

async function fromStream(plan: TailPlan, io: TailIo, printer: Printer, signal: AbortSignal, t: TailTuning) {
  const recent = windowOf(plan, printer);
  let attempts = 0;
  const query = (): StreamQuery => {
    attempts += 1;
    const base = {
      ...(plan.filter !== undefined ? { filter: plan.filter } : {}),
      ...(plan.capture !== undefined ? { capture: plan.capture } : {}),
      live: plan.follow,
    };
    if (attempts === 1) {
      return { ...base, ...(plan.from !== undefined ? { from: plan.from === 'all' ? 'all' : JSON.stringify(plan.from) } : {}) };
    }
    // a reconnect: after what was shown (AEP-0003 §3.3 item 3, §7)
    const positions = printer.resumePositions();
    return {
      ...base,
      ...(positions.length > 1 ? { from: JSON.stringify(positions) } : {}),
      ...(printer.lastEventId !== undefined ? { lastEventId: printer.lastEventId } : {}),
    };
  };
  let lost = false;
  const end = await followStream({
    target: plan.target,
    query,
    follow: plan.follow,
    signal,
    ...(t.idleMs !== undefined ? { idleMs: t.idleMs } : {}),
    ...(t.backoffMs !== undefined ? { backoffMs: t.backoffMs } : {}),
    handlers: {
      message: (m) => {
        const ev = decodeObject(m.data);
        if (ev === undefined) return;
        if (m.hasId) printer.lastEventId = m.id;
        if (recent !== undefined) recent.add(ev, m.data);
        else printer.print(ev, m.data);
      },
      comment: (c) => (c === REPLAYED ? recent?.flush() : comment(c, io)),
      state: (s) => {
        // a stream lost half way through its replay: what came is shown, the reconnect resumes after it
        if (s === 'reconnecting') recent?.flush();
        if (s === 'reconnecting' && !lost) io.err(renderNotice('stream lost: reconnecting', io.style));
        if (s === 'connected' && lost) io.err(renderNotice('reconnected', io.style));
        lost = s === 'reconnecting';
      },
    },
  });
  // a replay-only stream (`--no-follow`) ends after its replay
  if (end.kind === 'ended' || end.kind === 'aborted') recent?.flush();
  return end;
}

async function fromHistory(plan: TailPlan, io: TailIo, printer: Printer, signal: AbortSignal, t: TailTuning): Promise<void> {
  const after = new Map<string, Position>(plan.from !== undefined && plan.from !== 'all' ? plan.from.map((p) => [p.session, p]) : []);
  const named = new Set([...after.keys()].map(safeFileName));
  let unsupported = false;
  // recent context: the files written last hold the last events (a file's events are no newer than its mtime)
  const recent = windowOf(plan, printer, timeKey);
  const session = sessionOf(plan.filter);
  const fromStart = (file: string, newer: number): boolean => {
    if (plan.from !== 'all') return named.has(path.basename(file, '.jsonl'));
    if (recent === undefined || plan.recent === undefined) return true;
    return newer < plan.recent || (session !== undefined && path.basename(file, '.jsonl') === safeFileName(session));
  };
  const print = (ev: Record<string, unknown>, line: string) => (recent !== undefined ? recent.add(ev, line) : void printer.print(ev, line));
  const follower = new HistoryFollower({
    root: plan.historyRoot,
    follow: plan.follow,
    signal,
    ...(t.rescanMs !== undefined ? { rescanMs: t.rescanMs } : {}),
    onReady: () => recent?.flush(),
    startAt: (file, newer) => (fromStart(file, newer) ? 'start' : 'end'),
    onLine: (line) => {
      const ev = decodeObject(line);
      if (ev === undefined) return;
      // not an AEP event (no `aep` marker): skipped quietly; AEP-0003 §3.1 item 3: another major version is skipped, said once
      if (typeof ev['aep'] !== 'string') return;
      if (!ev['aep'].startsWith('0.')) {
        if (!unsupported) io.err(renderNotice('skipping lines of an unsupported AEP version', io.style));
        unsupported = true;
        return;
      }
      if (!plan.localFilter(ev)) return;
      const p = typeof ev['session'] === 'string' ? after.get(ev['session']) : undefined;
      if (p !== undefined && Number.isSafeInteger(ev['seq'])) {
        const at = { epoch: Number.isSafeInteger(ev['epoch']) ? (ev['epoch'] as number) : 0, seq: ev['seq'] as number };
        if (comparePosition(at, p) <= 0) return;
      }
      if (plan.capture === undefined) return print(ev, line);
      const low = downlevel(ev as CaptureEvent, plan.capture);
      print(low, low['capture'] === ev['capture'] ? line : JSON.stringify(low));
    },
  });
  await follower.run();
  recent?.flush();
}

/** The one session a filter names (`--session`), if any. */
function sessionOf(filter: string | undefined): string | undefined {
  if (filter === undefined) return undefined;
  const f = JSON.parse(filter) as Record<string, unknown>;
  return typeof f['session'] === 'string' ? f['session'] : undefined;
}

/** Run until the stream ends (`--no-follow`) or the signal fires; the exit code. */
export async function runTail(plan: TailPlan, io: TailIo, signal: AbortSignal, tuning: TailTuning = {}): Promise<number> {
  const now = tuning.now ?? Date.now;
  const cards = plan.json ? undefined : new PendingCards();
  const footer = cards !== undefined && io.terminal !== undefined ? new Footer(io.terminal, cards, io.style, now, tuning.footerTickMs) : undefined;
  // every line, events and notices, goes above the footer
  const tio: TailIo = footer === undefined ? io : { ...io, out: (l) => footer.print(io.out, l), err: (l) => footer.print(io.err, l) };
  try {
    return await follow(plan, tio, signal, tuning, cards, now);
  } finally {
    footer?.close();
  }
}

async function follow(
  plan: TailPlan,
  io: TailIo,
  signal: AbortSignal,
  tuning: TailTuning,
  cards: PendingCards | undefined,
  now: () => number,
): Promise<number> {
  const printer = new Printer(
    { out: io.out, style: io.style, json: plan.json, ...(cards !== undefined ? { cards, now } : {}) },
    plan.from !== undefined && plan.from !== 'all' ? plan.from : [],
  );
  const end = await fromStream(plan, io, printer, signal, tuning);
  if (end.kind === 'ended' || end.kind === 'aborted') return 0;
  if (end.kind === 'refused' && end.status !== 404) {
    const why = end.message ? `: ${end.message}` : '';
    io.err(`hermes-aep tail: ${describeTarget(plan.target)} refused the stream (${end.status} ${end.error})${why}`);
    return 1;
  }
  if (end.kind === 'unreachable' && !UNREACHABLE.has(end.code)) {
    io.err(`hermes-aep tail: cannot reach ${describeTarget(plan.target)} (${end.code})`);
    return 1;
  }
  io.err(renderNotice(`no daemon stream at ${describeTarget(plan.target)}: reading the history in ${plan.historyRoot}`, io.style));
  await fromHistory(plan, io, printer, signal, tuning);
  return 0;
}
