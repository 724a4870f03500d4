import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export type Ev = Record<string, any> & { id: string; type: string; session: string; seq: number; data: Record<string, any> };

/** Every event of every `{historyDir}/hermes/*.jsonl` file, by file name. */
export function readLogs(historyDir: string): Map<string, Ev[]> {
  const dir = path.join(historyDir, 'hermes');
  const out = new Map<string, Ev[]>();
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    return out;
  }
  for (const f of files.filter((f) => f.endsWith('.jsonl'))) {
    const text = readFileSync(path.join(dir, f), 'utf8');
    out.set(
      f,
      text
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as Ev),
    );
  }
  return out;
}

const TERMINALS: Record<string, string> = {
  'tool.completed': 'tool.requested',
  'tool.failed': 'tool.requested',
  'tool.denied': 'tool.requested',
  'run.finished': 'run.started',
  'run.cancelled': 'run.started',
  'run.failed': 'run.started',
  'delegation.subagent.stopped': 'delegation.subagent.started',
  'session.ended': 'session.started',
};

/**
 * The stream invariants every emitted session log must satisfy; returns the
 * violations (empty = sound). `pairedSessions` lists sessions whose starts were
 * all observed, so every terminal there must carry a resolving cause.
 */
export function streamViolations(events: readonly Ev[], opts: { requireCauses: boolean }): string[] {
  const v: string[] = [];
  const byId = new Map<string, Ev>();
  const seen = new Set<string>();
  let last: [number, number] | undefined;
  const runTerminals = new Map<string, number>();
  let ended = 0;
  const openCards = new Set<string>();
  for (const e of events) {
    if (seen.has(e.id)) v.push(`duplicate id ${e.id}`);
    seen.add(e.id);
    const pos: [number, number] = [e.epoch ?? 0, e.seq];
    if (last && (pos[0] < last[0] || (pos[0] === last[0] && pos[1] <= last[1])))
      v.push(`(epoch,seq) not increasing at ${e.type} ${pos.join(',')} after ${last.join(',')}`);
    last = pos;
    if (e.cause !== undefined) {
      const c = byId.get(e.cause);
      if (!c) v.push(`${e.type} ${e.id}: cause ${e.cause} does not resolve to an earlier event`);
    }
    const start = TERMINALS[e.type];
    if (e.type === 'session.ended' && !events.some((x) => x.type === 'session.started')) {
      // a session whose start was never fired (Hermes's /new successor, a resumed session): no cause to claim
      if (e.cause !== undefined) v.push(`session.ended ${e.id}: claims a cause with no session.started`);
    } else if (start && opts.requireCauses) {
      const c = e.cause ? byId.get(e.cause) : undefined;
      if (!c || c.type !== start) v.push(`${e.type} ${e.id}: cause is not its ${start}`);
    }
    if (e.type.startsWith('run.') && e.type !== 'run.started') {
      runTerminals.set(e.run, (runTerminals.get(e.run) ?? 0) + 1);
      if (runTerminals.get(e.run)! > 1) v.push(`second terminal for run ${e.run}`);
    }
    if (e.type === 'attention.requested') openCards.add(e.id);
    if (['attention.answered', 'attention.resolved', 'attention.timeout'].includes(e.type)) {
      const req = byId.get(e.subject);
      if (!req || req.type !== 'attention.requested') v.push(`${e.type} ${e.id}: subject ${e.subject} is not an attention.requested id`);
      if (e.type !== 'attention.answered') openCards.delete(e.subject);
    }
    if (e.type === 'session.ended') {
      ended++;
      if (openCards.size > 0) v.push(`session.ended with ${openCards.size} card(s) still open`);
    }
    byId.set(e.id, e);
  }
  if (ended > 1) v.push(`${ended} session.ended events`);
  return v;
}
