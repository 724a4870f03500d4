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
 * Every hook name the adapter has a decision for: the ones it registers (REGISTERED_HOOKS, mapped in src/mapping/)
 * and the ones it leaves on purpose, each with its reason in docs/hermes-drift.md. A name an installed Hermes
 * lists beyond these is one nobody has decided about yet: `doctor` reports it as unknown.
 */
export const KNOWN_HOOKS: readonly string[] = [...BASELINE_HOOKS];
