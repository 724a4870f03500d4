import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from './processes.js';

/**
 * The 39 hook names of Hermes 0.21.3's VALID_HOOKS (hermes_cli/plugins.py at NousResearch/hermes-agent
 * 00067189dfecf833d4d009c2dd977ae85cf800e0, whose hermes_cli/__init__.py says 0.21.3): names as data, the 23 of
 * 0.18.2 and the 16 added since. The text around them below is this project's own, laid out as 0.21 lays the set out:
 * several names per line, comments between them (some quoting JSON, as Hermes's own comments do).
 */
export const HOOKS_0_21_3_NEW = [
  'on_stream_start',
  'on_stream_delta',
  'on_stream_end',
  'on_interim_message',
  'transform_api_error_classification',
  'on_skill_lifecycle',
  'agent_loop_stopped',
  'on_room_member_activity',
  'pre_transcription',
  'on_kanban_worker_spawned',
  'on_kanban_worker_exited',
  'on_kanban_worker_stale_claim',
  'on_kanban_task_updated',
  'on_kanban_dispatch_tick',
  'gateway_platform_event',
  'pre_command',
] as const;

export const PLUGINS_PY_0_21_3_LAYOUT = `"""A stand-in for hermes_cli/plugins.py: only what doctor reads."""
from typing import Set

# a decoy the reader must not take for the set: it is not at the start of a line
#   VALID_HOOKS = {"not_a_hook"}

VALID_HOOKS: Set[str] = {
    "pre_tool_call", "post_tool_call", "transform_terminal_output",
    "transform_tool_result", "transform_llm_output",  # a transform may return {"text": "..."}
    "pre_llm_call", "post_llm_call", "pre_verify",
    # model calls, and the error classifier's override
    "pre_api_request", "post_api_request", "api_request_error", 'transform_api_error_classification',
    "on_session_start", "on_session_end", "on_session_finalize", "on_session_reset",
    "subagent_start", "subagent_stop",
    # stream observers: {"kind": "text"} deltas, once per chunk
    "on_stream_start", "on_stream_delta", "on_stream_end", "on_interim_message",
    "pre_gateway_dispatch", "pre_approval_request", "post_approval_response",
    "on_skill_lifecycle", "agent_loop_stopped", "on_room_member_activity", "pre_transcription",
    "kanban_task_claimed", "kanban_task_completed", "kanban_task_blocked",
    "on_kanban_worker_spawned", "on_kanban_worker_exited", "on_kanban_worker_stale_claim",
    "on_kanban_task_updated", "on_kanban_dispatch_tick",  # every tick, idle ones too
    "gateway_platform_event", "pre_command",
}

SHELL_UNSUPPORTED_HOOKS: Set[str] = {"transform_api_error_classification"}
`;

/** A Hermes tree as doctor reads it: `<root>/hermes_cli/{__init__,plugins}.py`, and `agent/outbound_webhooks.py` when asked. */
export function hermesTree(o: { init?: string; plugins?: string; outbound?: boolean } = {}): string {
  const root = tempDir('hermes-aep-hermes-tree-');
  mkdirSync(path.join(root, 'hermes_cli'));
  if (o.init !== undefined) writeFileSync(path.join(root, 'hermes_cli', '__init__.py'), o.init);
  if (o.plugins !== undefined) writeFileSync(path.join(root, 'hermes_cli', 'plugins.py'), o.plugins);
  if (o.outbound) {
    mkdirSync(path.join(root, 'agent'));
    writeFileSync(path.join(root, 'agent', 'outbound_webhooks.py'), '');
  }
  return root;
}

/** A 0.19-like tree (the newest on PyPI): a hook list, no outbound webhooks. Only the names doctor and install read. */
export function hermes019Tree(): string {
  return hermesTree({ init: '__version__ = "0.19.0"\n', plugins: 'VALID_HOOKS = {\n    "pre_tool_call",\n    "post_tool_call",\n}\n' });
}

/** A 0.21-like tree: the 0.21.3 hook list laid out as 0.21 lays it out, and agent/outbound_webhooks.py. */
export function hermes021Tree(): string {
  return hermesTree({ init: '__version__ = "0.21.3"\n', plugins: PLUGINS_PY_0_21_3_LAYOUT, outbound: true });
}

/** A `hermes` script whose `#!` interpreter is `<root>/venv/bin/python` (need not exist): what PATH leads the locator from. */
export function hermesScript(root: string): string {
  const bin = path.join(root, 'venv', 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(path.join(bin, 'hermes'), `#!${path.join(bin, 'python')}\nimport sys\n`, { mode: 0o755 });
  return bin;
}
