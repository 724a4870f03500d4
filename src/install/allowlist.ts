import { z } from 'zod';
import { REGISTERED_HOOKS } from '../hermes/envelope.js';
import { isOurCommand } from './hermes-config.js';

/** `$HERMES_HOME/shell-hooks-allowlist.json`, as Hermes reads it; unknown keys are kept. */
const allowlistSchema = z
  .object({
    approvals: z.array(z.unknown()).default([]),
  })
  .loose();

const approvalSchema = z.object({ event: z.string(), command: z.string() }).loose();

export interface AllowlistEdit {
  readonly text: string;
  readonly changed: boolean;
  readonly changes: string[];
}

function parse(text: string): z.infer<typeof allowlistSchema> {
  if (text.trim().length === 0) return { approvals: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error('shell-hooks-allowlist.json is not valid JSON; leaving it untouched');
  }
  const parsed = allowlistSchema.safeParse(raw);
  if (!parsed.success) throw new Error('shell-hooks-allowlist.json must be an object with an "approvals" list; leaving it untouched');
  return parsed.data;
}

/** Record consent for (event, command) pairs so Hermes registers the hooks without a TTY prompt. */
export function addApprovals(
  text: string,
  command: string,
  approvedAt: string,
  scriptMtime: string | null,
  events: readonly string[] = REGISTERED_HOOKS,
): AllowlistEdit {
  const data = parse(text);
  const changes: string[] = [];
  const kept = data.approvals.filter((a) => {
    const p = approvalSchema.safeParse(a);
    if (!p.success || !isOurCommand(p.data.command)) return true;
    // keep our current, exact entries; stale ones (another path) go
    return p.data.command === command && events.includes(p.data.event);
  });
  for (const event of events) {
    const has = kept.some((a) => {
      const p = approvalSchema.safeParse(a);
      return p.success && p.data.event === event && p.data.command === command;
    });
    if (has) continue;
    kept.push({ event, command, approved_at: approvedAt, script_mtime_at_approval: scriptMtime });
    changes.push(`allowlist: approve ${event}`);
  }
  const removed = data.approvals.length + changes.length - kept.length;
  if (removed > 0) changes.push(`allowlist: drop ${removed} stale hermes-aep entr${removed === 1 ? 'y' : 'ies'}`);
  const next = { ...data, approvals: kept };
  return { text: `${JSON.stringify(next, null, 2)}\n`, changed: changes.length > 0, changes };
}

export function removeApprovals(text: string): AllowlistEdit {
  const data = parse(text);
  const kept = data.approvals.filter((a) => {
    const p = approvalSchema.safeParse(a);
    return !(p.success && isOurCommand(p.data.command));
  });
  const removed = data.approvals.length - kept.length;
  if (removed === 0) return { text, changed: false, changes: [] };
  return {
    text: `${JSON.stringify({ ...data, approvals: kept }, null, 2)}\n`,
    changed: true,
    changes: [`allowlist: remove ${removed} hermes-aep entr${removed === 1 ? 'y' : 'ies'}`],
  };
}
