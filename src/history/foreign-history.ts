import type { open } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../core/logger.js';
import type { Degradation } from '../core/health-latch.js';
import { JsonlHistorySink } from './jsonl-history-sink.js';
import { safeFileName } from './safe-file-name.js';
import type { WriteOutcome } from '../bus/durable-log.js';
import type { WireEvent } from '../aep/wire.js';

/**
 * Where other emitters' events are kept: `{AEP_LOG_DIR}/ingest/{agent}/{session}.jsonl`
 * (the AEP-0003 §3.1 layout, one level down). Never `{AEP_LOG_DIR}/hermes/`: that
 * directory is this daemon's own lane, which the start-up rebuild reads as its
 * own sequence state, and a foreign emitter may well be called `hermes` too.
 */
export const INGEST_DIR = 'ingest';
/** agent-scoped events (AEP-0001 §5.2): no session, one file per agent; `safeFileName` never yields a leading dot */
export const AGENT_FILE = '.agent.jsonl';

export const foreignDirOf = (historyDir: string): string => path.resolve(historyDir, INGEST_DIR);

/** The file one foreign event is written to. */
export function foreignFileOf(dir: string, w: Pick<WireEvent, 'agent' | 'session'>): string {
  const agentDir = path.join(dir, safeFileName(w.agent));
  return path.join(agentDir, w.session === undefined ? AGENT_FILE : `${safeFileName(w.session)}.jsonl`);
}

export interface ForeignHistoryOptions {
  readonly historyDir: string;
  readonly queueMax: number;
  readonly fsyncIntervalMs?: number;
  readonly log?: Logger;
  /** tests inject file system faults here */
  readonly open?: typeof open;
}

/**
 * The durable store of ingested events: the same group-committed JSONL
 * writer as the Hermes history (fsync policy, torn-tail repair, full-disk
 * refusal and probe), writing each event's line as received (`w.line`).
 */
export class ForeignHistory {
  readonly dir: string;
  private readonly sink: JsonlHistorySink;

  constructor(o: ForeignHistoryOptions) {
    this.dir = foreignDirOf(o.historyDir);
    this.sink = new JsonlHistorySink(o.historyDir, o.queueMax, {
      subdir: INGEST_DIR,
      nested: true,
      latch: {
        sink: 'ingest_log',
        failing: 'the ingest log cannot be written: ingested events are refused (503) until it can; /healthz is degraded',
        recovered: 'the ingest log is writable again',
      },
      ...(o.fsyncIntervalMs !== undefined ? { fsyncIntervalMs: o.fsyncIntervalMs } : {}),
      ...(o.log ? { log: o.log } : {}),
      ...(o.open ? { open: o.open } : {}),
    });
  }

  /** Settles once the lines reached the operating system (or were retained/lost, counted); never rejects. */
  write(events: readonly WireEvent[]): Promise<WriteOutcome> {
    const byFile = new Map<string, string[]>();
    for (const w of events) {
      const file = foreignFileOf(this.dir, w);
      let lines = byFile.get(file);
      if (!lines) byFile.set(file, (lines = []));
      lines.push(`${w.line}\n`);
    }
    return this.sink.writeLines(byFile);
  }

  /** why a batch cannot be taken now (disk failing, queue full), or undefined */
  refusal(): string | undefined {
    return this.sink.refusal();
  }

  health(): Degradation | undefined {
    return this.sink.health();
  }

  start(): Promise<void> {
    return this.sink.start();
  }

  flush(): Promise<void> {
    return this.sink.flush();
  }

  shutdown(): Promise<void> {
    return this.sink.shutdown();
  }

  stats(): Record<string, number | boolean | string> {
    return this.sink.stats();
  }
}
