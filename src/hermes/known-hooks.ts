import { REGISTERED_HOOKS } from './envelope.js';

/**
 * The hook names of the design record's Hermes (0.18.2, `hermes_cli/plugins.py` VALID_HOOKS; unchanged in 0.19.0):
 * what `hermes-aep doctor` compares an installed Hermes's list against to find a hook that disappeared.
 */
export const BASELINE_HOOKS: readonly string[] = [
  ...REGISTERED_HOOKS,
  'transform_terminal_output',
  'transform_tool_result',
  'transform_llm_output',
  'post_llm_call',
  'pre_verify',
  'pre_api_request',
  'pre_gateway_dispatch',
  'kanban_task_claimed',
  'kanban_task_completed',
  'kanban_task_blocked',
];

/**
 * The hooks Hermes added after 0.19 (`VALID_HOOKS` at hermes-agent 00067189, 0.21.3) and the auxiliary-call pair (fired by
 * agent/auxiliary_hooks.py at 7effdff8, in no tagged `VALID_HOOKS`), each decided in docs/hermes-drift.md ("After 0.19"):
 * the aux pair and the stream hooks are mapped (a plugin transport only), the rest left on purpose.
 */
export const DECIDED_AFTER_0_19: readonly string[] = [
  'pre_auxiliary_call',
  'post_auxiliary_call',
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
];

/**
 * Every hook name the adapter has a decision for: the ones it registers (REGISTERED_HOOKS, mapped in src/mapping/)
 * and the ones it leaves on purpose, each with its reason in docs/hermes-drift.md. A name an installed Hermes
 * lists beyond these is one nobody has decided about yet: `doctor` reports it as unknown.
 */
export const KNOWN_HOOKS: readonly string[] = [...BASELINE_HOOKS, ...DECIDED_AFTER_0_19];
