import type { UiDeps } from './deps.js';

/** `GET /ui/state`: what the page needs besides the stream (AEP-free facts of this daemon). */
export interface UiState {
  readonly version: string;
  readonly jaegerUrl: string;
  /** the level the page reads the stream at (it never asks for more) */
  readonly capture: 'metadata';
  readonly gates: { readonly control: boolean; readonly instruct: boolean };
  /** AEP_TOKEN is configured and this request presented it: answers and instructions will be taken */
  readonly canAnswer: boolean;
  /** the daemon's clock, for the page's skew */
  readonly now: string;
}

export function uiState(deps: Pick<UiDeps, 'version' | 'jaegerUrl' | 'gates'>, canAnswer: boolean, now = new Date()): UiState {
  return {
    version: deps.version,
    jaegerUrl: deps.jaegerUrl,
    capture: 'metadata',
    gates: { control: deps.gates.control, instruct: deps.gates.instruct },
    canAnswer,
    now: now.toISOString(),
  };
}
