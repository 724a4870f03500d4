import { code, extraOf, nonNegInt, str, type HookEnvelope } from '../hermes/envelope.js';
import type { CapturePolicy } from '../capture/policy.js';
import { compact } from './content.js';
import { sessionName } from './session-name.js';
import type { MappedEvent } from './types.js';

function child(env: HookEnvelope): { session?: string } {
  return compact({ session: sessionName(str(extraOf(env).child_session_id)) });
}

/** `subagent_start` → `delegation.subagent.started` on the PARENT session; the goal is content and stays out. */
export function mapSubagentStart(env: HookEnvelope, _policy: CapturePolicy): MappedEvent[] {
  const x = extraOf(env);
  const c = child(env);
  return [compact({ type: 'delegation.subagent.started', data: compact({ child: c, role: code(x.child_role) }), subject: c.session })];
}

/** `subagent_stop` → `delegation.subagent.stopped`; the summary is content and stays out. */
export function mapSubagentStop(env: HookEnvelope, _policy: CapturePolicy): MappedEvent[] {
  const x = extraOf(env);
  const c = child(env);
  const data = compact({ child: c, status: code(x.child_status), duration_ms: nonNegInt(x.duration_ms) });
  return [compact({ type: 'delegation.subagent.stopped', data, subject: c.session })];
}
