/**
 * `hermes-aep tail`'s options turned into a plan: where the stream is (the
 * daemon's Unix socket by default, else TCP with `AEP_TOKEN`), where the
 * history is (`AEP_LOG_DIR`), the filter (`--session`, `--type`, `--filter`
 * combined, checked here so a typo fails the same way on either path), the
 * resume point (by default the last 10 events, then the live ones, like
 * tail(1); `--lines 0` new ones only; `--from` exact) and the capture ceiling. Errors name the option, never a
 * value (a URL or a token can be a secret).
 */
import { CAPTURE_LEVELS, type CaptureLevel } from '../core/capture-levels.js';
import { loadConfig } from '../config/config.js';
import type { Position } from '../aep/wire.js';
import { compileLocalFilter, type LocalFilter } from './local-filter.js';
import type { StreamTarget } from './sse-client.js';
import { streamTarget } from './target.js';

export interface TailCliOptions {
  readonly url?: string;
  readonly socket?: string;
  readonly token?: string;
  readonly session?: string;
  readonly type?: readonly string[];
  readonly filter?: string;
  readonly from?: string;
  /** `-n/--lines`: recent events shown before following */
  readonly lines?: string;
  readonly capture?: string;
  readonly json?: boolean;
  /** commander's `--no-follow` */
  readonly follow?: boolean;
}

export interface TailPlan {
  readonly target: StreamTarget;
  readonly historyRoot: string;
  /** the combined filter as sent to the daemon; absent = everything */
  readonly filter?: string;
  readonly localFilter: LocalFilter;
  /** absent: live only (following), `all`, or exact positions */
  readonly from?: 'all' | readonly Position[];
  /** with `from: 'all'`: only the last this many events of the replay are printed (the rest observed), then the live ones */
  readonly recent?: number;
  readonly capture?: CaptureLevel;
  readonly json: boolean;
  readonly follow: boolean;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

function parseJson(raw: string, option: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new Error(`${option} takes JSON`);
  }
}

/** What `tail` shows before following when no option says otherwise (tail(1)'s default). */
export const DEFAULT_LINES = 10;

export function parseLines(raw: string): number {
  const n = Number(raw);
  if (!/^\d{1,7}$/.test(raw) || !Number.isSafeInteger(n)) throw new Error('--lines takes a whole number of events >= 0 (0: only new events)');
  return n;
}

export function parseFromOption(raw: string): 'all' | Position[] {
  if (raw === 'all') return 'all';
  const v = parseJson(raw, '--from');
  const rule = '--from takes all or a JSON array of {"session","epoch","seq"} (seq and epoch whole numbers >= 0)';
  if (!Array.isArray(v) || v.length === 0) throw new Error(rule);
  return v.map((p) => {
    if (!isRecord(p) || typeof p['session'] !== 'string' || p['session'] === '' || !isCount(p['seq']) || !isCount(p['epoch'] ?? 0)) throw new Error(rule);
    return { session: p['session'], epoch: (p['epoch'] ?? 0) as number, seq: p['seq'] };
  });
}

function combinedFilter(o: TailCliOptions): Record<string, unknown> {
  const base = o.filter !== undefined ? parseJson(o.filter, '--filter') : {};
  if (!isRecord(base)) throw new Error('--filter takes a JSON object (AEP-0003 §6 attr-match)');
  const out: Record<string, unknown> = { ...base };
  if (o.session !== undefined) {
    if ('session' in base) throw new Error('--session and a "session" key in --filter: use one');
    out['session'] = o.session;
  }
  const types = (o.type ?? []).flatMap((t) => t.split(',')).filter((t) => t !== '');
  if (types.length > 0) {
    if ('type' in base) throw new Error('--type and a "type" key in --filter: use one');
    out['type'] = types.length === 1 ? types[0] : types;
  }
  return out;
}

export function planTail(o: TailCliOptions, env: NodeJS.ProcessEnv = process.env): TailPlan {
  const config = loadConfig(env);
  const target = streamTarget(o, config);
  if (o.capture !== undefined && !(CAPTURE_LEVELS as readonly string[]).includes(o.capture)) {
    throw new Error(`--capture takes ${CAPTURE_LEVELS.join(', ')}`);
  }
  const filterObject = combinedFilter(o);
  const compiled = compileLocalFilter(filterObject);
  if ('error' in compiled) throw new Error(`--filter: ${compiled.error}`);
  const follow = o.follow !== false;
  const lines = o.lines !== undefined ? parseLines(o.lines) : undefined;
  if (lines !== undefined && o.from !== undefined) throw new Error('--lines and --from: use one');
  // like tail(1): the last DEFAULT_LINES events, then follow; `--no-follow` alone prints everything held
  const recent = o.from !== undefined ? undefined : (lines ?? (follow ? DEFAULT_LINES : undefined));
  const from = o.from !== undefined ? parseFromOption(o.from) : recent === 0 && follow ? undefined : 'all';
  return {
    target,
    historyRoot: config.historyDir,
    ...(Object.keys(filterObject).length > 0 ? { filter: JSON.stringify(filterObject) } : {}),
    localFilter: compiled.filter,
    ...(from !== undefined ? { from } : {}),
    ...(recent !== undefined && from !== undefined ? { recent } : {}),
    ...(o.capture !== undefined ? { capture: o.capture as CaptureLevel } : {}),
    json: o.json === true,
    follow,
  };
}
